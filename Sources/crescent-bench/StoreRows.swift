import CrescentKit
import Foundation
import GRDB
import Glibc
import Model
import Services
import Synchronization

/// The rows of the store: awaited adds against GRDB alone, and the time from an add to
/// its `didChange` handler.
///
/// Store writes answer from the store's writer queue when they cannot run on the loop, and hop
/// back to the loop, which NIO's EmbeddedEventLoop (the other rows' host) cannot take from other
/// threads. These rows run the real thing instead: a script on `ScriptRunner`'s one-thread NIO
/// loop, as `crescent` runs it, with the store over a file in a temporary folder (WAL,
/// `synchronous = NORMAL`, the defaults). By default a small write runs right on the loop when
/// nothing can make it wait; with `write_on_loop = false` every write goes to the writer queue,
/// and each awaited call then pays two thread wake-ups (to the writer and back to the loop).
/// The script times itself with `services.benchclock:now()` (CLOCK_MONOTONIC) and prints figures.
enum StoreRows {
    /// The record every add stores, and its JSON text as the store writes it (keys sorted).
    static let recordLua = #"{ title = "buy milk", done = false, priority = 2, tags = { "home", "errand" } }"#
    static let recordJSON = #"{"done":false,"priority":2,"tags":["home","errand"],"title":"buy milk"}"#

    // MARK: store-add

    /// 100,000 single-record adds awaited one after another in one task, in records per second,
    /// against GRDB inserting the same JSON text, one `DatabasePool.write` transaction per row.
    /// The row measures the default settings; the note adds the figure with every write on the
    /// writer queue (`[store] write_on_loop = false`).
    static func add() throws(BenchFailure) -> BenchRow {
        let row = "store-add"
        let count = 100_000
        var byDefault: [Double] = [], onQueue: [Double] = [], baseline: [Double] = []
        for _ in 0..<3 {
            byDefault.append(try awaitedAdds(row: row, count: count, writeOnLoop: true))
            baseline.append(try grdbInserts(row: row, count: count))
            onQueue.append(try awaitedAdds(row: row, count: count, writeOnLoop: false))
        }
        let best = baseline.max() ?? .nan, bestOnQueue = onQueue.max() ?? .nan
        return BenchRow(name: row, value: byDefault.max() ?? .nan, baseline: best, unit: "rec/s", goal: .ratioAtLeast(0.7),
                        note: "\(count) awaited add calls in one task on crescent's real NIO loop, default settings (small writes on the loop when nothing can make them wait), best of 3; "
                            + "with [store] write_on_loop = false (every write on the writer queue): \(NumberFormat.fixed(bestOnQueue, digits: 1)) rec/s, ratio \(NumberFormat.fixed(bestOnQueue / best, digits: 2)); "
                            + "baseline: GRDB DatabasePool.write inserting the same JSON text, one transaction per row, same file and settings "
                            + "(it compiles BEGIN and COMMIT for each write and checkpoints inside its commits; the store caches those statements "
                            + "and queues its checkpoints on the writer, where the next write waits for them)")
    }

    /// Records per second for `count` awaited adds from a script.
    private static func awaitedAdds(row: String, count: Int, writeOnLoop: Bool) throws(BenchFailure) -> Double {
        let output = try runScript(row: row, config: "[store]\nwrite_on_loop = \(writeOnLoop)\n", """
            local c = services.store:collection("bench")
            local clock = services.benchclock
            task(function()
              local record = \(recordLua)
              for i = 1, 1000 do assert(c:add(record)) end
              local started = clock:now()
              for i = 1, \(count) do
                local stored, err = c:add(record)
                if err then error(tostring(err)) end
              end
              print(clock:now() - started, c.count)
            end)
            """)
        guard output.count == 2, let nanoseconds = Double(output[0]), output[1] == String(count + 1000) else {
            throw BenchFailure(row: row, reason: "unexpected output \(output)")
        }
        return Double(count) / (nanoseconds / 1e9)
    }

    /// Rows per second for `count` one-row transactions straight through GRDB.
    private static func grdbInserts(row: String, count: Int) throws(BenchFailure) -> Double {
        let folder = try TemporaryFolder(row: row)
        do {
            // The store makes the file and its tables, so both sides write the same schema.
            let store = try Store(path: folder.path + "/store.sqlite")
            _ = try store.collection(named: "bench")
            store.close()
            var configuration = Configuration()
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            let pool = try DatabasePool(path: folder.path + "/store.sqlite", configuration: configuration)
            let insert = { @Sendable in
                try pool.write { db in
                    try db.execute(sql: "INSERT INTO records (collection, data) VALUES (?, ?)", arguments: ["bench", recordJSON])
                }
            }
            for _ in 0..<1000 { try insert() }
            let started = MonotonicClock.nanoseconds()
            for _ in 0..<count { try insert() }
            let elapsed = Double(MonotonicClock.nanoseconds() - started)
            try pool.close()
            return Double(count) / (elapsed / 1e9)
        } catch {
            throw BenchFailure(row: row, reason: "GRDB baseline: \(error)")
        }
    }

    // MARK: store-change

    /// Microseconds from `add` to its `didChange` handler (median of 2,000), against the time
    /// from `add` to its completion with nobody observing.
    static func change() throws(BenchFailure) -> BenchRow {
        let row = "store-change"
        let output = try runScript(row: row, """
            local c = services.store:collection("changes")
            local clock = services.benchclock
            local function median(t) table.sort(t) return t[(#t + 1) // 2] end
            task(function()
              local record = \(recordLua)
              local started, delivered = 0, {}
              local sub = c:on("didChange", function() delivered[#delivered + 1] = clock:now() - started end)
              for i = 1, 2200 do
                started = clock:now()
                assert(c:add(record))
              end
              sub:cancel()
              local completed = {}
              for i = 1, 2200 do
                started = clock:now()
                assert(c:add(record))
                completed[#completed + 1] = clock:now() - started
              end
              -- the first 200 of each are warm-up
              print(median(table.move(delivered, 201, #delivered, 1, {})), median(table.move(completed, 201, #completed, 1, {})), #delivered)
            end)
            """)
        guard output.count == 3, let delivery = Double(output[0]), let completion = Double(output[1]), output[2] == "2200" else {
            throw BenchFailure(row: row, reason: "unexpected output \(output)")
        }
        return BenchRow(name: row, value: delivery / 1000, baseline: completion / 1000, unit: "µs", goal: .informational,
                        note: "one awaited add observed by a didChange handler, call to delivery, median of 2000; "
                            + "baseline: call to completion of the same add, nobody observing")
    }

    // MARK: Running a script

    /// Runs `source` with the store (over a fresh temporary folder) and the bench clock, and
    /// returns the words it printed; anything on stderr or a failed run is a failure.
    /// `onOutput` runs as each piece of output (a print, a rendered frame) is written.
    static func runScript(row: String, config: String = "", ui: HostOptions.UIMode = .plain,
                          plugins: [any Plugin] = [StoreBenchPlugin()], _ source: String,
                          onOutput: (@Sendable () -> Void)? = nil) throws(BenchFailure) -> [String] {
        let folder = try TemporaryFolder(row: row)
        let configPath = folder.path + "/crescent.toml"
        do {
            try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        } catch {
            throw BenchFailure(row: row, reason: "cannot write \(configPath): \(error)")
        }
        let printed = Mutex(""), errors = Mutex("")
        let console = Console(colors: false) { stream, text in
            if stream == .error { errors.withLock { $0 += text } } else {
                onOutput?()
                printed.withLock { $0 += text }
            }
        }
        var options = HostOptions()
        options.dataDirectory = folder.path
        options.configPath = configPath
        options.memoryLimitMiB = 0
        options.ui = ui
        let status = ScriptRunner.run(.code(source), bytes: Array(source.utf8), options: options,
                                      plugins: plugins, console: console)
        let reported = errors.withLock { $0 }
        guard status == 0, reported.isEmpty else {
            throw BenchFailure(row: row, reason: "the script failed (status \(status)): \(reported)")
        }
        return printed.withLock { $0 }.split(whereSeparator: { $0 == "\t" || $0 == "\n" }).map(String.init)
    }

    /// A folder under the system's temporary folder, removed when the value goes away.
    private final class TemporaryFolder {
        let path: String

        init(row: String) throws(BenchFailure) {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-bench-\(UUID().uuidString.prefix(8))").path
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw BenchFailure(row: row, reason: "cannot make a temporary folder: \(error)")
            }
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }
}

/// The store and session, plus `services.benchclock`, for the store rows.
struct StoreBenchPlugin: Plugin {
    let name = "store"

    func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] {
        try Store.make(context) + [BenchClock()]
    }
}

/// `services.benchclock:now()`: CLOCK_MONOTONIC in nanoseconds, for scripts that time themselves.
final class BenchClock: Service {
    let changes = ChangePublisher()
    var interface: AnyInterface { Self.declaration }

    static let declaration: AnyInterface = Interface<BenchClock>(name: "benchclock", summary: "A monotonic clock.") { d in
        d.function("now", [], returns: "nanoseconds", "CLOCK_MONOTONIC in nanoseconds.") { _, _ throws(ServiceError) in
            .integer(Int64(MonotonicClock.nanoseconds()))
        }
    }.erased
}
