import CrescentKit
import Testing

/// DESIGN.md "Services", await: inside `task(...)` a missing completion waits and returns
/// `result, err`; outside a task it is an error that says how to fix it.
@Suite struct AwaitTests {
    static let missingCompletion = "thermostat:set(degrees, completion): argument #2 (completion) is missing: pass function(result, err) as the last argument, or call it inside task(function() ... end) to wait for the result"

    @Test func insideATaskAMissingCompletionWaitsForResultAndError() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            local waited = false
            local tk = task(function()
              local result, err = t:set(21)
              print("set", result, err, waited)
              local r2, e2 = t:set(500)
              print("set 500", r2, e2.code, tostring(e2))
              local function nested() return t:echo({ 1, 2, 3 }) end
              local items, e3 = nested()
              print("echo", #items, items[3], e3)
              local place = t:locate({ lat = 1, lon = 2 }, { name = "x" })
              print("locate", place.name, select("#", t:echo("two values")))
              return "finished"
            end)
            waited = true
            print("after task()", tk.done)
            """)
        #expect(test.lines == ["after task()\tfalse"], "the call waits: the rest of the main chunk runs first")
        test.settle()
        #expect(test.lines == [
            "after task()\tfalse",
            "set\t21.0\tnil\ttrue",
            "set 500\tnil\tinvalid_argument\tthermostat.set: invalid_argument: temperature 500.0 is outside [-50, 100]",
            "echo\t3\t3\tnil",
            "locate\tx\t2",
        ])
        #expect(test.exitStatus == 0)
    }

    @Test func outsideATaskAMissingCompletionSaysHowToFixIt() throws {
        let test = try TestHost(thermostat: Thermostat())
        test.run("""
            local t = services.thermostat
            print(select(2, pcall(function() t:set(1) end)))
            print(select(2, pcall(function() t:set(1, nil) end)))
            task(function()
              -- a plain coroutine inside a task cannot wait for the host either
              local co = coroutine.wrap(function() return t:set(2) end)
              print(select(2, pcall(co)))
            end)
            """)
        #expect(test.lines == [
            "test.lua:2: \(Self.missingCompletion)",
            "test.lua:3: \(Self.missingCompletion)",
            // Issue 38, M13: it said to call it inside a task, which it was.
            "test.lua:6: thermostat:set(degrees, completion): argument #2 (completion) is missing, and this call is in a coroutine of its own inside the task, which cannot wait: call it in the task's function itself, or pass function(result, err) as the last argument",
        ])
    }

    @Test func awaitingTheAsyncMethodOnARealLoop() async throws {
        let run = await RealLoopRun.run("""
            local t = services.thermostat
            local order = {}
            task(function()
              local result, err = t:slow(0.5)
              order[#order + 1] = "a"
              print("slow", result, err)
              print(table.concat(order, ","))
            end)
            task(function()
              local result, err = t:slow(0.01)
              order[#order + 1] = "b"
              print("fast", result, err)
            end)
            """)
        #expect(run.status == 0)
        #expect(run.lines == ["fast\tdone\tnil", "slow\tdone\tnil", "b,a"])
    }

    /// Answers that arrive at once run back to back in batches on the real loop, yet in the
    /// order they were queued (three tasks take turns), and a timer due meanwhile still fires
    /// between batches rather than after the last await.
    @Test func awaitsRunInOrderAndLetTimersInOnARealLoop() async throws {
        let run = await RealLoopRun.run("""
            local t = services.thermostat
            local order = {}
            for k = 1, 3 do
              task(function()
                for i = 1, 200 do
                  order[#order + 1] = k
                  assert(t:echo(i) == i)
                end
              end)
            end
            local fired = false
            timer.after(0.02, function() fired = true end)
            task(function()
              local n = 0
              while (not fired or #order < 600) and n < 200000 do n = n + 1; t:echo(n) end
              local cyclic = #order == 600
              for i = 4, #order do cyclic = cyclic and order[i] == order[i - 3] end
              print(#order, cyclic, fired)
            end)
            """)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines == ["600\ttrue\ttrue"])
    }

    @Test func cancellingATaskThatAwaitsARequestEndsTheRequest() async throws {
        // The Request is not returned to an awaiting task, so the only way to cancel the work
        // is to cancel the task; the task itself then never resumes.
        let run = await RealLoopRun.run("""
            local t = services.thermostat
            local tk = task(function()
              local result, err = t:slow(60)
              print("never", result, err)
            end)
            timer.after(0.05, function() tk:cancel() print("cancelled", tk.done, tk.error) end)
            """, timeout: 50)
        #expect(run.status == 0)
        #expect(run.lines == ["cancelled\ttrue\tcancelled"])
        // Far below the request's 60 s even when the machine is busy: the request was cancelled.
        #expect(run.seconds < 40, "took \(run.seconds) s")
    }
}
