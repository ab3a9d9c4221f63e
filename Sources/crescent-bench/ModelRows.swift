import CLua
import CPlatform
import Glibc
import LuaBridge
import Model

/// The rows of the model contract: property reads, deliveries, fan-out, await and the
/// cost of a subscription, each against a baseline measured in the same run.
enum ModelRows {
    // MARK: property

    static let propertySource = """
        function read_loop(obj, n)
          local s = 0
          for i = 1, n do s = s + obj.value end
          return s
        end
        """

    /// `svc.value` from Lua (cached, no Swift on the path) against a plain C `__index` getter.
    static func property() throws(BenchFailure) -> BenchRow {
        let bench = try BenchHost(row: "property")
        try bench.run(propertySource)
        bench.service.value.set(42)
        try bench.drain()
        crescent_bench_register_c_property(bench.vm.state)
        let loop = bench.global("read_loop")
        _ = bench.vm.getGlobal("services")
        try? bench.vm.stack.getField(-1, "bench")
        let service = bench.vm.ref()
        bench.vm.stack.pop()
        let cObject = bench.global("bench_c_property")
        let n: Int64 = 20_000
        let samples = try PairedSamples.collect(
            rounds: 200, warmups: 20,
            subject: { () throws(BenchFailure) in try perCall(loop, service, n, bench) },
            baseline: { () throws(BenchFailure) in try perCall(loop, cObject, n, bench) }
        )
        return BenchRow(name: "property", value: Statistics.minimum(samples.subject),
                        baseline: Statistics.minimum(samples.baseline), unit: "ns", goal: .ratioAtMost(1.5),
                        note: "\(n) reads per round, best of 200; baseline: a C __index getter on userdata")
    }

    private static func perCall(_ loop: LuaRef, _ object: LuaRef, _ n: Int64, _ bench: BenchHost) throws(BenchFailure) -> Double {
        let stack = bench.vm.stack
        loop.push(onto: stack)
        object.push(onto: stack)
        stack.push(n)
        let elapsed = try MonotonicClock.time { () throws(BenchFailure) in
            do throws(LuaError) { try bench.vm.call(arguments: 2, results: 1) } catch {
                throw BenchFailure(row: bench.row, reason: error.message)
            }
        }
        let sum = stack.integer(at: -1)
        stack.pop()
        guard sum == 42 * n else { throw BenchFailure(row: bench.row, reason: "read \(sum.map(String.init) ?? "nil"), expected \(42 * n)") }
        return elapsed / Double(n)
    }

    // MARK: deliver and fanout

    /// One change to one observer with `coalesce = false`: the registry's delivery into Lua, per
    /// delivery, against C code that pcalls the same handler with a three-field table.
    static func deliver() throws(BenchFailure) -> BenchRow {
        try deliveries(row: "deliver", observers: 1, changesPerRound: 2_000,
                       note: "2000 changes queued, then one delivery round timed; per delivery, best of 100")
    }

    /// One change to 1,000 observers, per delivery.
    static func fanout() throws(BenchFailure) -> BenchRow {
        try deliveries(row: "fanout", observers: 1_000, changesPerRound: 1,
                       note: "1 change, 1000 observers, one delivery round timed; per delivery, best of 100")
    }

    private static func deliveries(row: String, observers: Int, changesPerRound: Int, note: String) throws(BenchFailure) -> BenchRow {
        let bench = try BenchHost(row: row)
        try bench.run("""
            calls = 0
            function handler(new, old, change) calls = calls + 1 end
            for i = 1, \(observers) do
              observe(services.bench, "value", handler, { initial = false, coalesce = false })
            end
            """)
        let handler = bench.global("handler")
        var next = 0
        let perRound = Double(observers * changesPerRound)
        let samples = try PairedSamples.collect(
            rounds: 100, warmups: 10,
            subject: { () throws(BenchFailure) in
                for _ in 0..<changesPerRound {
                    next += 1
                    bench.service.value.set(next)
                }
                return try MonotonicClock.time { () throws(BenchFailure) in try bench.drain() } / perRound
            },
            baseline: { () throws(BenchFailure) in
                try MonotonicClock.time { () throws(BenchFailure) in
                    crescent_bench_c_deliver_loop(bench.vm.state, handler.id, lua_Integer(perRound))
                } / perRound
            }
        )
        _ = bench.vm.getGlobal("calls")
        let calls = bench.vm.stack.integer(at: -1) ?? 0
        bench.vm.stack.pop()
        let expected = Int64(perRound) * 2 * 110
        guard calls == expected else {
            throw BenchFailure(row: row, reason: "the handler ran \(calls) times, expected \(expected)")
        }
        return BenchRow(name: row, value: Statistics.minimum(samples.subject), baseline: Statistics.minimum(samples.baseline),
                        unit: "ns", goal: .ratioAtMost(1.8), note: note + "; baseline: C lua_pcall with a 3-field table")
    }

    // MARK: await

    /// A task awaiting a trivial service method: one round trip is call, argument check, request,
    /// completion on a later loop turn and resume. It runs as `crescent` runs a script
    /// (`ScriptRunner` on its real NIO loop), timing itself with `services.benchclock`.
    /// Baseline: a bare coroutine resume/yield in Lua, timed the same way in the same task.
    static func await() throws(BenchFailure) -> BenchRow {
        let n = 10_000
        let output = try StoreRows.runScript(row: "await", plugins: [RealLoopBenchPlugin()], """
            local echo, svc, clock = services.bench.echo, services.bench, services.benchclock
            local n = \(n)
            task(function()
              for i = 1, n do echo(svc, i) end
              local best, baseline = math.huge, math.huge
              for round = 1, 20 do
                local started = clock:now()
                local s = 0
                for i = 1, n do s = s + echo(svc, i) end
                best = math.min(best, (clock:now() - started) / n)
                assert(s == n * (n + 1) // 2, "echo summed " .. s)
                local co = coroutine.wrap(function() while true do coroutine.yield(1) end end)
                started = clock:now()
                s = 0
                for i = 1, n do s = s + co() end
                baseline = math.min(baseline, (clock:now() - started) / n)
              end
              print(best, baseline)
            end)
            """)
        guard output.count == 2, let value = Double(output[0]), let baseline = Double(output[1]) else {
            throw BenchFailure(row: "await", reason: "unexpected output \(output)")
        }
        return BenchRow(name: "await", value: value / 1000, baseline: baseline / 1000, unit: "µs", goal: .valueAtMost(2),
                        note: "\(n) awaited echo calls per round, best of 20, in a script on crescent's real NIO loop (ScriptRunner); "
                            + "baseline: coroutine resume/yield")
    }

    // MARK: subscribe

    /// `observe(...)` then `:cancel()`, per pair, against a pure-Lua observer list doing the same.
    static func subscribe() throws(BenchFailure) -> BenchRow {
        let bench = try BenchHost(row: "subscribe")
        try bench.run("""
            local svc, options = services.bench, { initial = false }
            local function h() end
            function observe_loop(n)
              for i = 1, n do observe(svc, "value", h, options):cancel() end
            end
            function lua_loop(n)
              local list = {}
              for i = 1, n do
                list[#list + 1] = { handler = h, key = "value", active = true }
                list[#list] = nil
              end
            end
            """)
        let n: Int64 = 10_000
        let samples = try PairedSamples.collect(
            rounds: 30, warmups: 3,
            subject: { () throws(BenchFailure) in
                try MonotonicClock.time { () throws(BenchFailure) in try bench.call("observe_loop", n) } / Double(n)
            },
            baseline: { () throws(BenchFailure) in
                try MonotonicClock.time { () throws(BenchFailure) in try bench.call("lua_loop", n) } / Double(n)
            }
        )
        return BenchRow(name: "subscribe", value: Statistics.minimum(samples.subject), baseline: Statistics.minimum(samples.baseline),
                        unit: "ns", goal: .informational, note: "\(n) observe+cancel pairs per round, best of 30; baseline: a pure-Lua observer record")
    }

    /// Heap bytes per live subscription, measured in a crescent-bench process of its own (this
    /// row alone, `--json`): what mallinfo2 counts as in use depends on how the chunks freed
    /// before are reused, so after the rows that run before it one build read 254.4 B where it
    /// read 250.7 B alone, and full runs of one build ranged over 250.0–256.3 B.
    static func subscriptionBytes() throws(BenchFailure) -> BenchRow {
        let row = "subscription-bytes"
        if StartupBench.environment(ownProcessVariable) != nil { return try measureSubscriptionBytes() }
        let folder = try BenchFolder(row: row)
        _ = try TimedRun.run([try StartupBench.benchPath(), "--only", row, "--json"], stdout: folder.path + "/row.json",
                             stderr: folder.path + "/stderr.txt", environment: [ownProcessVariable: "1"], row: row)
        let text = try folder.read("row.json", row: row)
        guard let measured = (try? Value(jsonBytes: Array(text.utf8)))?.arrayValue?.first,
              let value = measured["value"].doubleValue, let baseline = measured["baseline"].doubleValue else {
            throw BenchFailure(row: row, reason: "its own process printed no measurement: '\(text.prefix(200))'")
        }
        return BenchRow(name: row, value: value, baseline: baseline, unit: "B", goal: .valueAtMost(256),
                        note: subscriptionBytesNote + ", in a crescent-bench process of its own")
    }

    /// Set in the environment of the process that measures `subscription-bytes` itself.
    private static let ownProcessVariable = "CRESCENT_BENCH_OWN_PROCESS"

    private static let subscriptionBytesNote =
        "heap bytes (Swift + Lua, mallinfo2) per live subscription over 1000000; baseline: a pure-Lua record"

    /// Heap bytes (Swift and Lua) per live subscription over 1,000,000, against a pure-Lua record
    /// `{ handler, key, active }`. The array holding them is filled with `true` first, so its own
    /// size is counted in neither.
    private static func measureSubscriptionBytes() throws(BenchFailure) -> BenchRow {
        let bench = try BenchHost(row: "subscription-bytes")
        let n: Int64 = 1_000_000
        try bench.run("""
            local svc, options = services.bench, { initial = false }
            local function h() end
            function prepare(n)
              subs = {}
              for i = 1, n do subs[i] = true end
              collectgarbage() collectgarbage()
            end
            function fill_subscriptions(n)
              for i = 1, n do subs[i] = observe(svc, "value", h, options) end
              collectgarbage() collectgarbage()
            end
            function fill_records(n)
              for i = 1, n do subs[i] = { handler = h, key = "value", active = true } end
              collectgarbage() collectgarbage()
            end
            function clear()
              for i = 1, #subs do if type(subs[i]) == "userdata" then subs[i]:cancel() end end
              subs = nil
              collectgarbage() collectgarbage()
            end
            """)
        func measure(_ fill: String) throws(BenchFailure) -> Double {
            try bench.call("prepare", n)
            let before = heapBytes()
            try bench.call(fill, n)
            let after = heapBytes()
            try bench.call("clear", 0)
            try bench.drain()
            return Double(after - before) / Double(n)
        }
        let subject = try measure("fill_subscriptions")
        let baseline = try measure("fill_records")
        return BenchRow(name: "subscription-bytes", value: subject, baseline: baseline, unit: "B", goal: .valueAtMost(256),
                        note: subscriptionBytesNote)
    }

    private static func heapBytes() -> Int {
        Int(crescent_heap_bytes())
    }
}
