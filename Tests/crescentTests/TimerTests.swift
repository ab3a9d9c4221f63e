import Testing

/// `timer.after` / `timer.every` and the exit rule: the run ends when no timer is left.
@Suite struct TimerTests {
    @Test func timersFireInDelayOrder() async throws {
        // Created out of order, with 100 ms between deadlines: each counts from the line that
        // creates it, so a stall between those lines longer than the gap (20 ms was seen on a
        // loaded machine) would reorder them.
        let result = try await runScript("""
            timer.after(0.4, function() print("d") end)
            timer.after(0.1, function() print("a") end)
            timer.after(0.3, function() print("c") end)
            timer.after(0.2, function() print("b") end)
            print("main")
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "main\na\nb\nc\nd\n", "\(result)")
    }

    @Test func equalDelaysFireInCreationOrder() async throws {
        let result = try await runScript("""
            for i = 1, 8 do timer.after(0.02, function() print(i) end) end
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == (1...8).map(String.init), "\(result)")
    }

    @Test func zeroDelayRunsAfterTheMainChunk() async throws {
        let result = try await runScript("""
            timer.after(0, function() print("timer") end)
            print("main end")
            """)
        #expect(result.stdout == "main end\ntimer\n", "\(result)")
    }

    @Test func everyRepeatsUntilCancelledFromInsideTheCallback() async throws {
        let result = try await runScript("""
            local n = 0
            local t
            t = timer.every(0.01, function(handle)
              n = n + 1
              print("tick", n, handle == t, rawequal(handle, t))
              if n == 3 then
                handle:cancel()
                print("active", t.active)
              end
            end)
            print("active at start", t.active)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "active at start\ttrue",
            "tick\t1\ttrue\ttrue",
            "tick\t2\ttrue\ttrue",
            "tick\t3\ttrue\ttrue",
            "active\tfalse",
        ], "\(result)")
        #expect(result.stderr == "", "\(result)")
    }

    @Test func aTimerCancelledBeforeItFiresNeverFires() async throws {
        let result = try await runScript("""
            local t = timer.after(0.01, function() print("fired") end)
            local u = timer.after(0.02, function() print("kept") end)
            print(t.active)
            t:cancel()
            t:cancel() -- idempotent
            print(t.active, u.active)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "true\nfalse\ttrue\nkept\n", "\(result)")
        #expect(result.stderr == "", "\(result)")
    }

    @Test func aOneShotTimerIsInactiveAfterItFired() async throws {
        let result = try await runScript("""
            local t
            t = timer.after(0.01, function(h) print("in callback", h == t) end)
            timer.after(0.04, function() print("after", t.active) end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "in callback\ttrue\nafter\tfalse\n", "\(result)")
    }

    @Test func oneTimerCanCancelAnother() async throws {
        let result = try await runScript("""
            local ticker = timer.every(0.01, function() print("tick") end)
            timer.after(0.035, function() ticker:cancel() print("stopped", ticker.active) end)
            """)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.last == "stopped\tfalse", "\(result)")
        #expect(lines.filter { $0 == "tick" }.count >= 1, "\(result)")
        #expect(lines.filter { $0 == "tick" }.count <= 4, "\(result)")
    }

    @Test func timersCreatedInCallbacksKeepTheRunAlive() async throws {
        let result = try await runScript("""
            local function chain(n)
              print("step", n)
              if n < 4 then timer.after(0.005, function() chain(n + 1) end) end
            end
            timer.after(0.005, function() chain(1) end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["step\t1", "step\t2", "step\t3", "step\t4"], "\(result)")
    }

    @Test func theRunExitsWhenNoTimersRemain() async throws {
        let result = try await runScript("""
            timer.after(0.05, function() print("last") end)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "last\n", "\(result)")
        #expect(result.elapsed >= 0.05, "\(result)")
    }

    @Test(arguments: [
        ("timer.after(-1, function() end)", "bad argument #1 to 'timer.after'"),
        ("timer.after('soon', function() end)", "bad argument #1 to 'timer.after'"),
        ("timer.after(0.01, 5)", "bad argument #2 to 'timer.after'"),
        ("timer.every(0.01)", "bad argument #2 to 'timer.every'"),
    ])
    func badArgumentsRaiseAtTheCallSite(code: String, message: String) async throws {
        let result = try await runScript(code)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.hasPrefix("crescent: script.lua:1: \(message)"), "\(result)")
    }
}
