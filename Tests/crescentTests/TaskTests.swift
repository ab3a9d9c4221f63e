import Testing

/// `task(fn, ...)` and `sleep(seconds)`: coroutine tasks on the loop, and the Task handle's
/// `done`, `result`, `error` and `cancel()`.
/// Deadlines that must stay in order are 100 ms or more apart: each counts from the line that
/// makes it, and a loaded machine can stall a process between two lines for tens of milliseconds.
@Suite struct TaskTests {
    @Test func tasksInterleaveBySleepTime() async throws {
        let result = try await runScript("""
            task(function(name, delay)
              print(name, "start")
              sleep(delay)
              print(name, "end")
            end, "slow", 0.3)
            task(function()
              print("fast start")
              sleep(0.1)
              print("fast end")
            end)
            print("main end")
            """)
        #expect(result.status == 0, "\(result)")
        // A task runs at once up to its first sleep, then the main chunk goes on.
        #expect(result.stdoutLines == [
            "slow\tstart", "fast start", "main end", "fast end", "slow\tend",
        ], "\(result)")
        #expect(result.stderr == "", "\(result)")
    }

    @Test func sleepingInALoopKeepsOrder() async throws {
        let result = try await runScript("""
            task(function()
              for i = 1, 3 do print("a", i) sleep(0.2) end
            end)
            task(function()
              sleep(0.1)
              for i = 1, 3 do print("b", i) sleep(0.2) end
            end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["a\t1", "b\t1", "a\t2", "b\t2", "a\t3", "b\t3"], "\(result)")
    }

    @Test func doneAndResultAfterTheTaskReturns() async throws {
        let result = try await runScript("""
            local t = task(function(a, b) sleep(0.01) return a + b end, 2, 3)
            print("running", t.done, t.result, t.error)
            timer.after(0.05, function() print("finished", t.done, t.result, t.error) end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "running\tfalse\tnil\tnil\nfinished\ttrue\t5\tnil\n", "\(result)")
    }

    @Test func aTaskWithoutSleepFinishesAtOnce() async throws {
        let result = try await runScript("""
            local t = task(function() return "value" end)
            print(t.done, t.result)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "true\tvalue\n", "\(result)")
    }

    @Test func cancelStopsATaskAndSetsItsError() async throws {
        let result = try await runScript("""
            local t = task(function()
              sleep(0.5)
              print("not reached")
            end)
            timer.after(0.01, function()
              t:cancel()
              t:cancel() -- idempotent
              print("cancelled", t.done, t.error)
            end)
            """)
        #expect(result.status == 0, "cancelling is not an error: \(result)")
        #expect(result.stdout == "cancelled\ttrue\tcancelled\n", "\(result)")
        #expect(result.stderr == "", "\(result)")
    }

    @Test func aTaskCanCancelItself() async throws {
        let result = try await runScript("""
            local t
            t = task(function()
              sleep(0.01)
              t:cancel()
              sleep(0.01)
              print("not reached")
            end)
            timer.after(0.05, function() print(t.done, t.error) end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "true\tcancelled\n", "\(result)")
    }

    @Test func aFailedTaskKeepsItsErrorMessage() async throws {
        let result = try await runScript("""
            local t = task(function() sleep(0.01) error("task failed", 0) end)
            timer.after(0.05, function()
              print(t.done, t.result)
              print(t.error)
            end)
            """)
        #expect(result.status == 1, "an error in a task is reported: \(result)")
        #expect(result.stderr.hasPrefix("crescent: error in task: task failed"), "\(result)")
        #expect(result.stderr.contains("stack traceback:"), "\(result)")
        // `t.error` is the error value itself: the traceback belongs on stderr, not in the value.
        do {
            #expect(result.stdout == "true\tnil\ntask failed\n", "\(result)")
        }
    }

    @Test func aFailedTaskKeepsANonStringErrorValue() async throws {
        let result = try await runScript("""
            local t = task(function() sleep(0.01) error({ code = "not_found" }) end)
            timer.after(0.05, function() print(type(t.error), type(t.error) == "table" and t.error.code) end)
            """)
        #expect(result.status == 1, "\(result)")
        do {
            #expect(result.stdout == "table\tnot_found\n", "\(result)")
        }
    }

    @Test func sleepOutsideATaskIsAClearError() async throws {
        let result = try await runScript("sleep(0.01)")
        #expect(result.status == 1, "\(result)")
        let first = result.stderrLines.first ?? ""
        #expect(first.hasPrefix("crescent: script.lua:1: sleep: not inside a task"), "\(result)")
        #expect(first.contains("task(function()"), "the message says how to fix it: \(result)")
    }

    @Test func sleepInATimerCallbackIsAClearError() async throws {
        let result = try await runScript("timer.after(0.01, function() sleep(0.01) end)")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("sleep: not inside a task"), "\(result)")
    }

    @Test func badSleepArgumentsRaise() async throws {
        let result = try await runScript("task(function() sleep(-1) end)")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("bad argument #1 to 'sleep'"), "\(result)")
    }

    @Test func taskRequiresAFunction() async throws {
        let result = try await runScript("task(42)")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.hasPrefix("crescent: script.lua:1: bad argument #1 to 'task'"), "\(result)")
    }

    @Test func aRunningTaskKeepsTheRunAlive() async throws {
        let result = try await runScript("""
            task(function() sleep(0.05) print("woke") end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "woke\n", "\(result)")
    }
}
