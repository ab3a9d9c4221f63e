import CLua
import LuaBridge

/// The `callback` row: Swift calling the Lua function `function(i) return i end` with one integer,
/// protected with the traceback handler, through `LuaVM.call(_:_:)`, against the same loop written
/// in C (`crescent_bench_c_callback_loop`: `lua_rawgeti`, `lua_pushinteger`, `crescent_pcall`,
/// `lua_tointeger`, `lua_pop`). The value is nanoseconds per call, best of the rounds.
enum CallbackBench {
    static let name = "callback"
    static let callsPerRound: Int64 = 20_000
    static let rounds = 200
    static let warmups = 20

    static func run() throws(BenchFailure) -> BenchRow {
        let vm = try BenchVM.make(row: name)
        let function = try BenchVM.evaluate("return function(i) return i end", in: vm, row: name)
        let samples = try PairedSamples.collect(
            rounds: rounds, warmups: warmups,
            subject: { () throws(BenchFailure) in try swiftNanosecondsPerCall(function, in: vm) },
            baseline: { () throws(BenchFailure) in try cNanosecondsPerCall(function, in: vm) }
        )
        return BenchRow(
            name: name,
            value: Statistics.minimum(samples.subject),
            baseline: Statistics.minimum(samples.baseline),
            unit: "ns",
            goal: .ratioAtMost(1.3),
            note: "\(callsPerRound) calls per round, best of \(rounds) rounds; baseline: crescent_bench_c_callback_loop (C)"
        )
    }

    /// The sum both loops must return: the arguments 0..<n echoed back.
    private static var expectedSum: Int64 { callsPerRound * (callsPerRound - 1) / 2 }

    private static func swiftNanosecondsPerCall(_ function: LuaRef, in vm: LuaVM) throws(BenchFailure) -> Double {
        var sum: Int64 = 0
        let elapsed = try MonotonicClock.time { () throws(BenchFailure) in
            do throws(LuaError) {
                for i in 0..<callsPerRound {
                    sum &+= try vm.call(function, i) ?? 0
                }
            } catch {
                throw BenchFailure(row: name, reason: error.message)
            }
        }
        try check(sum, of: "the Swift loop")
        return elapsed / Double(callsPerRound)
    }

    private static func cNanosecondsPerCall(_ function: LuaRef, in vm: LuaVM) throws(BenchFailure) -> Double {
        var sum: Int64 = 0
        let elapsed = MonotonicClock.time {
            sum = Int64(crescent_bench_c_callback_loop(vm.state, function.id, lua_Integer(callsPerRound)))
        }
        try check(sum, of: "the C loop")
        return elapsed / Double(callsPerRound)
    }

    private static func check(_ sum: Int64, of loop: String) throws(BenchFailure) {
        guard sum == expectedSum else {
            throw BenchFailure(row: name, reason: "\(loop) summed \(sum), expected \(expectedSum)")
        }
    }
}
