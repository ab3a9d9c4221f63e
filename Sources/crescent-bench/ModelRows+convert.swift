import CLua
import LuaBridge

extension ModelRows {
    // MARK: convert

    static let convertCount: Int64 = 10_000

    /// 10,000 records of 8 fields each (strings short and long, integers, a float, a boolean, a
    /// nested array), and one loop per side that passes each record through and reads a field
    /// of the copy.
    static let convertSource = """
        records = {}
        for i = 1, \(convertCount) do
          records[i] = { id = i, name = "record " .. i, title = "a title longer than fifteen bytes " .. i,
                         price = i * 1.5, qty = i % 100, done = i % 2 == 0, note = "n",
                         tags = { "home", "errand", "weekly " .. i % 7 } }
        end
        local svc = services.bench
        local mirror = svc.mirror
        function swift_loop(n)
          local s = 0
          for i = 1, n do s = s + mirror(svc, records[i]).qty end
          total = s
        end
        function c_loop(n)
          local s = 0
          for i = 1, n do s = s + bench_c_mirror(records[i]).qty end
          total = s
        end
        """

    /// A service function echoing a record, Lua → Swift value → Lua, per record, against C code
    /// copying it with the Lua C API (`bench_c_mirror`: lua_next over the table, each string and
    /// number read and pushed anew). Both are called from the same Lua loop.
    static func convert() throws(BenchFailure) -> BenchRow {
        let bench = try BenchHost(row: "convert")
        crescent_bench_register_c_mirror(bench.vm.state)
        try bench.run(convertSource)
        let n = convertCount
        let expected = (0..<n).reduce(Int64(0)) { $0 + ($1 + 1) % 100 }
        func measure(_ loop: String) throws(BenchFailure) -> Double {
            let elapsed = try MonotonicClock.time { () throws(BenchFailure) in try bench.call(loop, n) }
            _ = bench.vm.getGlobal("total")
            let total = bench.vm.stack.integer(at: -1)
            bench.vm.stack.pop()
            guard total == expected else {
                throw BenchFailure(row: "convert", reason: "\(loop) summed \(total.map(String.init) ?? "nil"), expected \(expected)")
            }
            return elapsed / Double(n)
        }
        let samples = try PairedSamples.collect(
            rounds: 30, warmups: 3,
            subject: { () throws(BenchFailure) in try measure("swift_loop") },
            baseline: { () throws(BenchFailure) in try measure("c_loop") }
        )
        return BenchRow(name: "convert", value: Statistics.minimum(samples.subject), baseline: Statistics.minimum(samples.baseline),
                        unit: "ns", goal: .ratioAtMost(2.0),
                        note: "\(n) records of 8 fields (strings, integers, a float, a boolean, a 3-item array) per round, "
                            + "each through svc:mirror(record) (a service function: Lua → Swift value → Lua), per record, best of 30; "
                            + "baseline: bench_c_mirror, the same copy with the Lua C API")
    }
}
