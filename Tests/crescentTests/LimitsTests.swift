import Testing

/// `--timeout SECONDS` and `--memory-limit MIB`: a runaway script ends cleanly with exit 1.
@Suite struct LimitsTests {
    @Test func timeoutStopsAnInfiniteLoop() async throws {
        let result = try await runScript("""
            print("started")
            while true do end
            """, options: ["--timeout", "0.5"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "started\n", "\(result)")
        #expect(result.stderr.hasPrefix("crescent: "), "\(result)")
        #expect(result.stderr.contains("--timeout"), "\(result)")
        #expect(result.stderr.contains("script.lua:2"), "the message says where Lua was stopped: \(result)")
        #expect(result.elapsed >= 0.45, "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func timeoutStopsAnIdleRunKeptAliveByALongTimer() async throws {
        let result = try await runScript("""
            timer.after(60, function() print("not reached") end)
            """, options: ["--timeout", "0.5"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "", "\(result)")
        #expect(result.stderr.contains("--timeout"), "\(result)")
    }

    @Test func timeoutStopsALoopInsideATimerCallback() async throws {
        let result = try await runScript("""
            timer.after(0.01, function() while true do end end)
            """, options: ["--timeout", "0.5"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("--timeout"), "\(result)")
    }

    /// The interrupt raised in Lua is an ordinary error, so a `pcall` in a loop swallows it.
    @Test func timeoutStopsALoopThatCatchesEveryError() async throws {
        do {
            let result = try await runScript("""
                while true do pcall(function() while true do end end) end
                """, options: ["--timeout", "0.5"], timeLimit: 20)
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("--timeout"), "\(result)")
            #expect(!result.stderr.contains("did not stop"), "stopped by the interrupt, not by the forced exit: \(result)")
        }
    }

    /// A script's own line hook does not take the time limit away, and while no interrupt is
    /// pending the hook is the script's alone (as under lua5.4).
    @Test func timeoutStopsALoopUnderTheScriptsOwnHook() async throws {
        let result = try await runScript("""
            assert(debug.gethook() == nil, "a fresh script has no hook")
            local lines = 0
            local function count() lines = lines + 1 end
            debug.sethook(count, "l", 0)
            assert(debug.gethook() == count)
            for _ = 1, 3 do local x = 1 end
            print(lines > 3)
            while true do end
            """, options: ["--timeout", "0.5"], timeLimit: 20)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "true\n", "\(result)")
        #expect(result.stderr.contains("--timeout"), "\(result)")
        #expect(result.stderr.contains("script.lua:8"), "the message says where Lua was stopped: \(result)")
        #expect(!result.stderr.contains("did not stop"), "\(result)")
    }

    /// A loop inside a coroutine the script made itself is interrupted where it runs.
    @Test func timeoutStopsALoopInsideAScriptsCoroutine() async throws {
        let result = try await runScript("""
            local spin = coroutine.wrap(function() while true do end end)
            spin()
            """, options: ["--timeout", "0.5"], timeLimit: 20)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("--timeout"), "\(result)")
        #expect(result.stderr.contains("interrupted: time limit reached"), "\(result)")
        #expect(!result.stderr.contains("did not stop"), "\(result)")
    }

    /// `pcall` and `xpcall` are Lua's own C functions, not wrappers: tracebacks and
    /// `debug.getinfo` read as they do under lua5.4.
    @Test func pcallAndXpcallAreLuasOwn() async throws {
        let result = try await runScript("""
            print(debug.getinfo(pcall, "S").what, debug.getinfo(xpcall, "S").what)
            print(select(2, pcall(error, "x", 0)))
            local ok, trace = xpcall(function() error("deep") end, debug.traceback)
            print(ok, select(2, trace:gsub("\\n", "\\n")) < 8)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "C\tC\nx\nfalse\ttrue\n", "\(result)")
    }

    @Test func aScriptThatEndsInTimeIsNotAffected() async throws {
        let result = try await runScript("""
            timer.after(0.02, function() print("done") end)
            """, options: ["--timeout", "60"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "done\n", "\(result)")
        // Far below the 60 s limit even on a loaded machine: the limit does not keep the run alive.
        #expect(result.elapsed < 30, "the timeout does not keep the run alive: \(result)")
    }

    static let allocateForever = """
        local t = {}
        while true do t[#t + 1] = string.rep("x", 1000) .. #t end
        """

    @Test func memoryLimitStopsUnboundedAllocationCleanly() async throws {
        let result = try await runScript(Self.allocateForever, options: ["--memory-limit", "16"])
        #expect(result.status == 1, "\(result)")
        #expect(!result.killedBySignal, "\(result)")
        #expect(result.stderr.hasPrefix("crescent: "), "\(result)")
        #expect(result.stderr.contains("memory limit"), "\(result)")
        #expect(result.stderr.contains("--memory-limit"), "the message says how to raise it: \(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func memoryLimitInATimerCallbackIsReported() async throws {
        let result = try await runScript("""
            timer.after(0.01, function()
            \(Self.allocateForever)
            end)
            """, options: ["--memory-limit", "16"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("memory limit"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func pcallCatchesTheMemoryErrorAndTheScriptGoesOn() async throws {
        let result = try await runScript("""
            local ok, err = pcall(function()
              local t = {}
              while true do t[#t + 1] = string.rep("x", 1000) .. #t end
            end)
            collectgarbage()
            print(ok, err)
            """, options: ["--memory-limit", "16"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "false\tscript.lua:3: not enough memory: the memory limit of 16 MiB was reached (raise it with --memory-limit)\n",
                "\(result)")
    }

    @Test func memoryLimitZeroMeansUnlimited() async throws {
        // About 50 MB of live strings.
        let result = try await runScript("""
            local t = {}
            for i = 1, 50000 do t[i] = string.rep("x", 1000) .. i end
            print(#t, collectgarbage("count") > 40 * 1024)
            """, options: ["--memory-limit", "0"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "50000\ttrue\n", "\(result)")
    }

    @Test func theSameAllocationFailsUnderASmallLimit() async throws {
        let result = try await runScript("""
            local t = {}
            for i = 1, 50000 do t[i] = string.rep("x", 1000) .. i end
            print("not reached")
            """, options: ["--memory-limit", "16"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "", "\(result)")
        #expect(result.stderr.contains("memory limit"), "\(result)")
    }
}
