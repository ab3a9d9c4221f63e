import CrescentKit
import Foundation
import Glibc
import Model
import Synchronization

/// The `list-apply` row: one add to a collection shown in a `view.table` that follows its
/// `didChange` with `tbl:apply(change)`, from the call to the rendered frame, with 10,000 records
/// against the same with 10. The cost should follow the change, not the collection.
///
/// It runs as `crescent` runs a script (`ScriptRunner`, its real NIO loop, the store over a file)
/// in `live` mode on a 24-line screen (`LINES`), where a render writes only the lines that changed.
/// The script notes the clock before each add; the console notes when each frame is written.
enum ListApplyRow {
    static let adds = 200

    static func run() throws(BenchFailure) -> BenchRow {
        let row = "list-apply"
        setenv("LINES", "24", 1)
        defer { unsetenv("LINES") }
        var large: [Double] = [], small: [Double] = []
        for _ in 0..<3 {
            large.append(contentsOf: try latencies(records: 10_000, row: row))
            small.append(contentsOf: try latencies(records: 10, row: row))
        }
        return BenchRow(name: row, value: Statistics.median(large) / 1000, baseline: Statistics.median(small) / 1000,
                        unit: "µs", goal: .ratioAtMost(2.0),
                        note: "one awaited add to a collection of 10000 records shown in a view.table that applies each didChange, "
                            + "from the add call to its frame written (live mode, 24 lines), median of 3 × \(adds); "
                            + "baseline: the same with 10 records (best: \(NumberFormat.fixed(Statistics.minimum(large) / 1000, digits: 1)) µs "
                            + "vs \(NumberFormat.fixed(Statistics.minimum(small) / 1000, digits: 1)) µs)")
    }

    /// Nanoseconds from each add to the frame that shows it.
    private static func latencies(records: Int, row: String) throws(BenchFailure) -> [Double] {
        let frames = Mutex<[UInt64]>([])
        let folder = try BenchFolder(row: row)
        let source = """
            local c = services.store:collection("bench")
            local clock = services.benchclock
            local List = controller("List")
            function List:loadView()
              return view.table { id = "t", columns = { "id", "title", { key = "qty", align = "right" } } }
            end
            function List:viewDidAppear()
              self.view.t:update(c.items)
              c:on("didChange", function(change) self.view.t:apply(change) end)
            end
            task(function()
              local batch = {}
              for i = 1, \(records) do batch[i] = { title = "item " .. i, qty = i } end
              assert(c:add(batch))
              app.push(List)
              sleep(0.05)
              local starts = {}
              for k = 1, \(adds) do
                starts[k] = clock:now()
                assert(c:add({ title = "new " .. k, qty = k }))
                sleep(0.002)
              end
              local out = assert(io.open("\(folder.path)/starts.txt", "w"))
              out:write(table.concat(starts, " "))
              out:close()
              app.exit(0)
            end)
            """
        _ = try StoreRows.runScript(row: row, ui: .live, source, onOutput: {
            frames.withLock { $0.append(MonotonicClock.nanoseconds()) }
        })
        let written = frames.withLock { $0 }
        let begun = try folder.read("starts.txt", row: row).split(separator: " ").compactMap { UInt64($0) }
        guard begun.count == adds else { throw BenchFailure(row: row, reason: "the script noted \(begun.count) adds of \(adds)") }
        // Each add's frame is the first one written after it started.
        var result: [Double] = []
        var next = 0
        for (index, start) in begun.enumerated() {
            while next < written.count && written[next] < start { next += 1 }
            let end = index + 1 < begun.count ? begun[index + 1] : UInt64.max
            guard next < written.count, written[next] < end else {
                throw BenchFailure(row: row, reason: "add \(index + 1) of \(records) records was not rendered before the next add")
            }
            result.append(Double(written[next] - start))
        }
        return result
    }
}
