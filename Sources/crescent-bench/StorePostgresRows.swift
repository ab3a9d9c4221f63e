import Foundation
import Glibc
import Logging
import Model
import NIOCore
import NIOPosix
import PostgresNIO
import PostgresTestSupport
import Services
import Synchronization

/// The rows of the store on PostgreSQL, against a throwaway cluster the bench starts itself
/// (initdb and pg_ctl in a temporary folder, a free loopback port; stopped at exit). Without
/// PostgreSQL installed, both rows fail saying so (`tools/setup.sh` installs it).
enum StorePostgresRows {
    // MARK: store-add-pg

    /// 5,000 single-record adds awaited one after another from a script, in records per second,
    /// against PostgresNIO inserting the same JSON, one BEGIN/INSERT/COMMIT transaction per row,
    /// same server.
    static func add() throws(BenchFailure) -> BenchRow {
        let row = "store-add-pg"
        let count = 5_000
        var subject: [Double] = [], baseline: [Double] = [], single: [Double] = []
        for _ in 0..<3 {
            let url = try database(row)
            subject.append(try awaitedAdds(row: row, url: url, count: count))
            baseline.append(try directInserts(row: row, url: url, count: count, inTransaction: true))
            single.append(try directInserts(row: row, url: url, count: count, inTransaction: false))
        }
        let autocommit = single.max() ?? .nan
        return BenchRow(name: row, value: subject.max() ?? .nan, baseline: baseline.max() ?? .nan, unit: "rec/s", goal: .ratioAtLeast(0.7),
                        note: "\(count) awaited add calls in one task on crescent's real NIO loop, [store] url on a throwaway local cluster (TCP loopback, fsync off), best of 3; "
                            + "each add is one prepared call of a procedure the connection made in pg_temp (the INSERT and its change-log row, COMMIT, "
                            + "then a read of the log, which finds the add's rows and so confirms the commit), one round trip; "
                            + "baseline: PostgresNIO on one connection inserting the same JSON into the same table, BEGIN/INSERT/COMMIT per row; "
                            + "the same with one autocommit INSERT per row (one round trip): \(String(format: "%.0f", autocommit)) rec/s")
    }

    private static func awaitedAdds(row: String, url: String, count: Int) throws(BenchFailure) -> Double {
        let output = try StoreRows.runScript(row: row, config: "[store]\nurl = \"\(url)\"\n", """
            local c = services.store:collection("bench")
            local clock = services.benchclock
            task(function()
              local record = \(StoreRows.recordLua)
              for i = 1, 200 do assert(c:add(record)) end
              local started = clock:now()
              for i = 1, \(count) do
                local stored, err = c:add(record)
                if err then error(tostring(err)) end
              end
              print(clock:now() - started, c.count)
            end)
            """)
        guard output.count == 2, let nanoseconds = Double(output[0]), output[1] == String(count + 200) else {
            throw BenchFailure(row: row, reason: "unexpected output \(output)")
        }
        return Double(count) / (nanoseconds / 1e9)
    }

    private static func directInserts(row: String, url: String, count: Int, inTransaction: Bool) throws(BenchFailure) -> Double {
        do {
            let connection = try connect(url)
            defer { _ = try? connection.close().wait() }
            let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
            let json = StoreRows.recordJSON
            func insert() throws {
                if inTransaction { _ = try connection.query("BEGIN", logger: logger).wait() }
                _ = try connection.query("INSERT INTO crescent_records (collection, data) VALUES ('direct', \(json)::jsonb)", logger: logger).wait()
                if inTransaction { _ = try connection.query("COMMIT", logger: logger).wait() }
            }
            for _ in 0..<200 { try insert() }
            let started = MonotonicClock.nanoseconds()
            for _ in 0..<count { try insert() }
            return Double(count) / (Double(MonotonicClock.nanoseconds() - started) / 1e9)
        } catch {
            throw BenchFailure(row: row, reason: "PostgresNIO baseline: \(String(reflecting: error))")
        }
    }

    // MARK: store-propagate-pg

    /// Milliseconds from an awaited add by host A to the `didChange` handler of host B, both
    /// `crescent` processes running Lua scripts, median of 500; beside it the floor, a NOTIFY
    /// from one bare PostgresNIO connection to another.
    static func propagate() throws(BenchFailure) -> BenchRow {
        let row = "store-propagate-pg"
        let url = try database(row)
        let count = 550, warmUp = 50
        let delays: [Double]
        do {
            let observer = try TimedLinesProcess(row: row, role: "observing", url: url, script: """
                local c = services.store:collection("propagate")
                c:on("didChange", function(change)
                  for _, record in ipairs(change.insertedItems) do print(record.n) end
                end)
                timer.after(600, function() os.exit(0) end)
                print("ready")
                """)
            defer { observer.stop() }
            // Each add alone: the next starts 20 ms after the last answered, twice the goal.
            let writer = try TimedLinesProcess(row: row, role: "writing", url: url, script: """
                local c = services.store:collection("propagate")
                print("ready")
                task(function()
                  for n = 1, \(count) do
                    print(n)
                    local stored, err = c:add({ n = n })
                    if err then error(tostring(err)) end
                    sleep(0.02)
                  end
                end)
                """)
            defer { writer.stop() }
            guard writer.waitForExit(seconds: 300) else { throw BenchFailure(row: row, reason: "the writing crescent did not finish within 300 s") }
            // The last change may still be on its way to the observer.
            for _ in 0..<10_000 where observer.arrival(of: Int64(count)) == nil { usleep(200) }
            delays = (warmUp + 1...count).compactMap { n -> Double? in
                guard let sent = writer.arrival(of: Int64(n)), let arrived = observer.arrival(of: Int64(n)) else { return nil }
                return Double(Int64(arrived) - Int64(sent)) / 1e6
            }
        } catch let failure as BenchFailure {
            throw failure
        } catch {
            throw BenchFailure(row: row, reason: "\(error)")
        }
        let floor = try notifyRoundTrip(row: row, url: url)
        guard delays.count >= 400 else { throw BenchFailure(row: row, reason: "only \(delays.count) of \(count - warmUp) changes arrived") }
        return BenchRow(name: row, value: median(delays), baseline: floor, unit: "ms", goal: .valueAtMost(10),
                        note: "host A (a crescent process running a Lua script that awaits one add every 20 ms) to the didChange handler of host B "
                            + "(a crescent process with a Lua observer), both with [store] url on the same database; A prints each record's number "
                            + "just before its add and B prints it in its handler, timed as each line reaches the bench; "
                            + "median of 500; baseline (the floor): NOTIFY on one bare PostgresNIO connection to its arrival on another, median of 500")
    }

    private static func notifyRoundTrip(row: String, url: String) throws(BenchFailure) -> Double {
        do {
            let sender = try connect(url), listener = try connect(url)
            defer { _ = try? sender.close().wait(); _ = try? listener.close().wait() }
            let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
            let arrived = Mutex<UInt64?>(nil)
            listener.addListener(channel: "bench_floor") { _, _ in
                let now = MonotonicClock.nanoseconds()
                arrived.withLock { $0 = now }
            }
            _ = try listener.query("SELECT 1", logger: logger).wait()     // the LISTEN went first
            var delays: [Double] = []
            for round in 0..<550 {
                arrived.withLock { $0 = nil }
                let started = MonotonicClock.nanoseconds()
                _ = try sender.query("NOTIFY bench_floor", logger: logger).wait()
                var at: UInt64?
                for _ in 0..<2_000 where at == nil {
                    at = arrived.withLock { $0 }
                    if at == nil { usleep(50) }
                }
                if round >= 50, let at { delays.append(Double(at - started) / 1e6) }
            }
            return median(delays)
        } catch {
            throw BenchFailure(row: row, reason: "NOTIFY floor: \(String(reflecting: error))")
        }
    }

    // MARK: The cluster

    private static func database(_ row: String) throws(BenchFailure) -> String {
        do {
            FileHandle.standardError.write(Data("crescent-bench: \(row): starting a throwaway PostgreSQL cluster\n".utf8))
            return try PostgresCluster.shared().makeDatabase("bench")
        } catch {
            throw BenchFailure(row: row, reason: "no PostgreSQL to measure against: \(error)")
        }
    }

    private static func connect(_ text: String) throws -> PostgresConnection {
        // postgres://user:password@127.0.0.1:PORT/db, as PostgresCluster makes it.
        guard let components = URLComponents(string: text), let host = components.host, let port = components.port else {
            throw BenchFailure(row: "store-pg", reason: "bad URL")
        }
        let configuration = PostgresConnection.Configuration(host: host, port: port, username: components.user ?? "",
                                                             password: components.password, database: String(components.path.dropFirst()), tls: .disable)
        return try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 1,
                                              logger: Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })).wait()
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[(sorted.count - 1) / 2]
    }
}
