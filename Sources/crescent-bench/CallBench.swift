import CLua
import LuaBridge

/// The object behind the Swift-exported userdata of the `call` row. It has no state: the row
/// measures the cost of entering Swift, not of the method's work.
final class CallBenchObject {}

/// The `call` row: `obj:get(i)` from Lua on a Swift-exported userdata, against the same method on
/// the shim's plain C userdata `bench_c_object`.
///
/// Both objects have the same shape: a metatable whose `__index` is the shim's C
/// `crescent_object_index` (raw lookup in a methods table), and a `get(i)` that checks its receiver's
/// type, checks that `i` is an integer and returns `i + 1`. The Swift method is entered through the
/// trampoline and uses the bridge's own checks (`LuaObjectType.check`, `LuaStack.checkInteger`).
/// Both run the same Lua loop; the value is nanoseconds per call, loop included, best of the rounds.
enum CallBench {
    static let name = "call"
    static let callsPerRound: Int64 = 20_000
    static let rounds = 200
    static let warmups = 20

    static let loopSource = """
        return function(obj, n)
          local s = 0
          for i = 1, n do s = s + obj:get(i) end
          return s
        end
        """

    static func run() throws(BenchFailure) -> BenchRow {
        let vm = try BenchVM.make(row: name)
        let loop = try BenchVM.evaluate(loopSource, in: vm, row: name)

        let swiftObject = makeSwiftObject(in: vm)
        crescent_bench_register_c_object(vm.state)
        _ = vm.getGlobal("bench_c_object")
        let cObject = vm.ref()

        let samples = try PairedSamples.collect(
            rounds: rounds, warmups: warmups,
            subject: { () throws(BenchFailure) in try nanosecondsPerCall(loop, on: swiftObject, in: vm) },
            baseline: { () throws(BenchFailure) in try nanosecondsPerCall(loop, on: cObject, in: vm) }
        )
        return BenchRow(
            name: name,
            value: Statistics.minimum(samples.subject),
            baseline: Statistics.minimum(samples.baseline),
            unit: "ns",
            goal: .ratioAtMost(1.5),
            note: "\(callsPerRound) calls per round, best of \(rounds) rounds; baseline: bench_c_object (C)"
        )
    }

    /// Exports `CallBenchObject` with a Swift `get` and pins one instance.
    private static func makeSwiftObject(in vm: LuaVM) -> LuaRef {
        let objectType = LateBound<LuaObjectType<CallBenchObject>>()
        let type = vm.objectType(
            CallBenchObject.self, name: "CallBenchObject",
            methods: [
                "get": { stack in
                    guard let type = objectType.value else { throw LuaRaise("get: CallBenchObject is not registered yet") }
                    _ = try type.check(1, in: stack, function: "get")
                    let i = try stack.checkInteger(2, function: "get")
                    stack.push(i &+ 1)
                    return .one
                },
            ]
        )
        objectType.value = type
        type.push(CallBenchObject(), onto: vm.stack)
        return vm.ref()
    }

    /// Runs the loop once over `object` and returns the time per call; checks the loop's sum.
    private static func nanosecondsPerCall(_ loop: LuaRef, on object: LuaRef, in vm: LuaVM) throws(BenchFailure) -> Double {
        let stack = vm.stack
        loop.push(onto: stack)
        object.push(onto: stack)
        stack.push(callsPerRound)
        let elapsed = try MonotonicClock.time { () throws(BenchFailure) in
            do throws(LuaError) {
                try vm.call(arguments: 2, results: 1)
            } catch {
                throw BenchFailure(row: name, reason: error.message)
            }
        }
        let sum = stack.integer(at: -1)
        stack.pop()
        let n = callsPerRound
        let expected = n * (n + 1) / 2 + n
        guard sum == expected else {
            throw BenchFailure(row: name, reason: "the loop returned \(sum.map(String.init) ?? "a non-integer"), expected \(expected)")
        }
        return elapsed / Double(n)
    }
}
