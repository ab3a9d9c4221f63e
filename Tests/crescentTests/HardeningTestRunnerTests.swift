import Foundation
import Testing

/// `crescent test` against specs that try to end, hang or confuse the run: `os.exit` anywhere in a
/// test, a test that never returns, waits that never end, messages with NUL bytes, a filter that
/// matches nothing.
@Suite struct HardeningTestRunnerTests {
    /// Writes a project plugin `plugins/NAME` of kind lua declaring the service NAME, with `main`.
    static func writeLuaPlugin(_ name: String, in sandbox: Sandbox, main: String) throws {
        try sandbox.write("plugins/\(name)/plugin.toml", """
            name = "\(name)"
            version = "1.0.0"
            crescent = ">=0.1.0"
            description = "A spec's plugin."
            kind = "lua"
            main = "main.lua"
            services = ["\(name)"]
            requires = []
            """)
        try sandbox.write("plugins/\(name)/main.lua", main)
    }

    @Test func osExitFailsItsTestWhereverItIsCalledAndTheRunGoesOn() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("exits.lua", "print('the script runs')\nos.exit(0)\nprint('not reached')\n")
        let (result, _) = try await TestCommandTests.run(["exit_spec.lua": """
            it("fails first", function() assert.equals(1, 2) end)
            it("exits", function() os.exit(0) end)
            it("runs a script that exits", function() script("exits.lua") end)
            it("exits from a timer", function()
              timer.after(1, function() os.exit(true) end)
              clock.advance(2)
              error("not reached")
            end)
            it("exits inside pcall", function() pcall(os.exit, 3) end)
            it("passes after them", function() end)
            """], ["--junit", "report.xml"], sandbox: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 5 failed", "\(result)")
        #expect(result.stdout.contains("the code under test called os.exit(0) at spec/exit_spec.lua:2"), "\(result)")
        #expect(result.stdout.contains("called os.exit(0) at exits.lua:2"), "\(result)")
        #expect(result.stdout.contains("called os.exit(0) at spec/exit_spec.lua:5"), "\(result)")
        #expect(result.stdout.contains("called os.exit(3)"), "\(result)")
        #expect(result.stdout.contains("the script runs") && !result.stdout.contains("not reached"), "\(result)")
        #expect(result.stdout.contains("ok      passes after them"), "\(result)")
        #expect(FileManager.default.fileExists(atPath: sandbox.path + "/report.xml"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func aTestPastItsTimeLimitFailsSayingSoAndTheRunGoesOn() async throws {
        let (result, _) = try await TestCommandTests.run(["loop_spec.lua": """
            it("loops", function() while true do end end)
            it("loops in a timer", function()
              timer.after(1, function() while true do end end)
              clock.advance(1)
            end)
            it("passes", function() assert.equals(2, 1 + 1) end)
            """], ["--timeout", "1"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 2 failed", "\(result)")
        #expect(result.stdout.contains("FAIL    loops  (spec/loop_spec.lua:1)"), "\(result)")
        #expect(result.stdout.contains("FAIL    loops in a timer  (spec/loop_spec.lua:2)"), "\(result)")
        #expect(result.stdout.contains("its time limit of 1 s (real time)"), "\(result)")
        #expect(result.stdout.contains("--timeout SECONDS"), "\(result)")
        // The host's own note names the limit that stopped it, not a script's unset --timeout.
        #expect(result.stdout.contains("stopped after 1 s (--timeout)") && !result.stdout.contains("after 0 s"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// A describe block's body runs when the file's tests are read: a loop there is stopped by
    /// the time limit, and an exit there fails the block (named as busted names a body that
    /// raises) instead of leaving it with no tests and the run green.
    @Test func aDescribeBodyThatLoopsOrExitsFailsTheFile() async throws {
        let (looping, _) = try await TestCommandTests.run(["loop_spec.lua": """
            describe("spins", function()
              while true do end
              it("never read", function() end)
            end)
            """, "other_spec.lua": """
            it("runs", function() end)
            """], ["--timeout", "1"])
        #expect(looping.status == 1, "\(looping)")
        #expect(looping.stdout.contains("FAIL    spins") && looping.stdout.contains("its time limit of 1 s"), "\(looping)")
        #expect(looping.stdout.contains("ok      runs"), "the other file's test runs: \(looping)")
        for exit in ["os.exit(0)", "os.exit(1)", "app.exit(0)"] {
            let (exited, _) = try await TestCommandTests.run(["exit_spec.lua": """
                it("t0", function() end)
                describe("exits", function()
                  \(exit)
                  it("t1", function() end)
                end)
                """], ["--timeout", "5"])
            #expect(exited.status == 1, "\(exit): \(exited)")
            #expect(exited.stdout.contains("FAIL    exits"), "\(exit): \(exited)")
            // t0 runs before the describe body, as under busted.
            #expect(exited.stdoutLines.last == "1 passed, 1 failed", "\(exit): \(exited)")
        }
    }

    /// A test waiting inside a C call on a program it started (no hook runs there) is stopped
    /// too: past its limit and a grace second, the programs are killed and the run goes on.
    @Test func aTestWaitingOnAProgramIsStoppedAtItsLimit() async throws {
        let (result, _) = try await TestCommandTests.run(["wait_spec.lua": """
            it("executes", function() os.execute("sleep 300") end)
            it("reads a pipe", function() io.popen("sh -c 'sleep 300; echo late'"):read("a") end)
            it("passes", function() end)
            """], ["--timeout", "1"], timeLimit: 30)
        #expect(!result.timedOut, "\(result)")
        #expect(result.status == 1 && result.stdoutLines.last == "1 passed, 2 failed", "\(result)")
        #expect(result.stdout.contains("FAIL    executes") && result.stdout.contains("FAIL    reads a pipe"), "\(result)")
        #expect(result.elapsed < 20, "\(result)")
    }

    /// A test blocked reading a stdin that stays open (a pipe whose writer never writes nor
    /// closes: here crescent holds it itself, so killing programs frees nothing) is stopped too:
    /// the read is broken by a signal that does not restart it, and the run goes on.
    @Test func aTestBlockedReadingAnOpenStdinIsStoppedAtItsLimit() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/read_spec.lua", """
            it("reads stdin", function() print(io.read("l")) end)
            it("passes", function() end)
            """)
        let result = try await crescent(["-c", "mkfifo in && exec 3<>in && exec \"$0\" test --timeout 1 < in", CrescentProcess.binaryPath],
                                        executable: "/bin/sh", in: sandbox, timeLimit: 30)
        #expect(!result.timedOut, "\(result)")
        #expect(result.status == 1 && result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("FAIL    reads stdin") && result.stdout.contains("its time limit of 1 s"), "\(result)")
        #expect(result.elapsed < 15, "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// A project plugin's method that never answers runs in the plugin's VM, on the test's
    /// thread: the test's limit stops it too, the test fails saying so, and the run goes on.
    @Test func aPluginMethodThatNeverAnswersIsStoppedAtTheTestsLimit() async throws {
        let sandbox = try Sandbox()
        try Self.writeLuaPlugin("looper", in: sandbox, main: """
            local s = service("looper", "Loops.")
            s:method("spin", {}, "value", "Spins.", function() while true do end end)
            s:method("hi", {}, "string", "Says hi.", function() return "hi" end)
            """)
        let (result, _) = try await TestCommandTests.run(["plugin_spec.lua": """
            it("calls spin", function() services.looper:spin() end)
            it("calls hi", function() assert.equals("hi", services.looper:hi()) end)
            """], ["--timeout", "2"], sandbox: sandbox, timeLimit: 40)
        #expect(!result.timedOut, "\(result)")
        #expect(result.status == 1 && result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("FAIL    calls spin") && result.stdout.contains("its time limit of 2 s"), "\(result)")
        #expect(result.stdout.contains("ok      calls hi"), "\(result)")
        #expect(result.elapsed < 20, "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// Closing a spec file's host, once its tests have run in its one Lua state, runs the
    /// finalizers left in its VM: one that loops is interrupted (the close's own limit,
    /// `LuaVM.closeLimit`), and one waiting in `pclose` on a program a test left running is freed
    /// by killing it; the file fails once saying why, and the next file's tests run.
    @Test func aHostThatDoesNotCloseFailsItsTestAndTheRunGoesOn() async throws {
        let (result, _) = try await TestCommandTests.run(["close_spec.lua": """
            it("passes first", function() end)
            it("loops at close", function() _G.keep = setmetatable({}, { __gc = function() while true do end end }) end)
            it("leaves a popen open", function() _G.p = io.popen("sleep 600") end)
            it("passes after", function() end)
            """, "later_spec.lua": """
            it("runs", function() end)
            """], ["--timeout", "2"], timeLimit: 50)
        #expect(!result.timedOut, "\(result)")
        #expect(result.status == 1 && result.stdoutLines.last == "5 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("FAIL    (closing a host of the file)  (spec/close_spec.lua)"), "\(result)")
        #expect(result.stdout.components(separatedBy: "was still closing after the time limit of 2 s (--timeout) and was stopped").count == 2,
                "\(result)")
        #expect(result.stdout.contains("ok      passes first") && result.stdout.contains("ok      passes after")
                && result.stdout.contains("ok      runs"), "\(result)")
        #expect(result.elapsed < 25, "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// A finalizer that loops (its object made at the file's top) runs once, as the file's one
    /// Lua state closes after its tests: it is stopped there, the file fails once saying why,
    /// none leaves a thread spinning, and the run ends.
    @Test func aFinalizerThatLoopsInEveryHostIsStoppedInEach() async throws {
        let (result, _) = try await TestCommandTests.run(["close_spec.lua": """
            local keep = setmetatable({}, { __gc = function() while true do end end })
            for i = 1, 8 do it("t" .. i, function() end) end
            """], ["--timeout", "1"], timeLimit: 60)
        #expect(!result.timedOut, "\(result)")
        #expect(result.status == 1 && result.stdoutLines.last == "8 passed, 1 failed", "\(result)")
        #expect(result.stdout.components(separatedBy: "was still closing after the time limit of 1 s (--timeout) and was stopped").count == 2,
                "\(result)")
        #expect(!result.stdout.contains("the run stopped"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// `app.exit(0)` inside a test fails it with a message that says what happened, not the bare
    /// "exiting" of the unwinding and a traceback into the runner.
    @Test func appExitZeroInATestSaysWhatHappened() async throws {
        let (result, _) = try await TestCommandTests.run(["exit_spec.lua": """
            it("exits", function() app.exit(0) end)
            it("passes", function() end)
            """], ["--timeout", "5"])
        #expect(result.status == 1 && result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("the code under test called app.exit(0), which ended the test there"), "\(result)")
        #expect(!result.stdout.contains("[crescent testing]"), "\(result)")
    }

    @Test func aFilterThatIsNotALuaPatternIsAUsageErrorNamingTheFix() async throws {
        let (result, _) = try await TestCommandTests.run(["some_spec.lua": """
            describe("store", function() it("adds [x]", function() end) end)
            """], ["--filter", "["])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("--filter [: not a valid Lua pattern (malformed pattern (missing ']'))"), "\(result)")
        #expect(result.stderr.contains("with %, as in --filter '%['"), "\(result)")
        #expect(!result.stdout.contains("no test's full name matches"), "\(result)")
        let (escaped, _) = try await TestCommandTests.run(["some_spec.lua": """
            describe("store", function() it("adds [x]", function() end) end)
            """], ["--filter", "%[x%]"])
        #expect(escaped.status == 0 && escaped.stdoutLines.last == "1 passed, 0 failed", "\(escaped)")
    }

    @Test func aFilterThatMatchesNoTestSaysSoAndFails() async throws {
        let (result, _) = try await TestCommandTests.run(["some_spec.lua": """
            describe("store", function() it("adds", function() end) end)
            """], ["--filter", "stroe"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("no test's full name matches --filter stroe"), "\(result)")
        #expect(result.stdoutLines.last == "0 passed, 0 failed", "\(result)")
    }

    @Test func aJUnitPathThatIsAFolderIsNamedAsOne() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.makeFolder("reports")
        let (result, _) = try await TestCommandTests.run(["some_spec.lua": """
            describe("store", function() it("adds", function() end) end)
            """], ["--junit", "reports"], sandbox: sandbox)
        #expect(result.stderr.contains("cannot write the JUnit report reports: it is a folder; name a file, such as reports/junit.xml"), "\(result)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain"), "\(result)")
    }

    @Test func waitsThatNeverEndAndNULBytesAreReportedAsTheyHappened() async throws {
        let (result, _) = try await TestCommandTests.run(["waits_spec.lua": """
            it("sleeps a year", function() sleep(365 * 86400) end)
            it("never settles", function()
              timer.every(1, function() end)
              clock.run()
            end)
            it("raises a NUL", function() error("before\\0after") end)
            """], ["--timeout", "60"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "0 passed, 3 failed", "\(result)")
        #expect(!result.stdout.contains("nothing was pending"), "\(result)")
        #expect(result.stdout.contains("more than 86400 s (a day) of virtual time"), "\(result)")
        #expect(result.stdout.contains("due 31536000 s after the test began waiting"), "\(result)")
        #expect(result.stdout.contains("clock.run: the clock did not settle: work was still pending after 100000 jobs"), "\(result)")
        #expect(result.stdout.contains("kept scheduling: timer.every(1 s) at spec/waits_spec.lua:3"), "\(result)")
        #expect(result.stdout.contains("spec/waits_spec.lua:6: before\\000after"), "\(result)")
        #expect(!result.stdout.contains("\u{0}"), "\(result)")
    }

    /// Issue 38, M6: a pending timer.at or timer.cron was named "timer.every(0 s)".
    @Test func aScheduleThatKeepsTheClockBusyIsNamedAsSuch() async throws {
        let (result, _) = try await TestCommandTests.run(["at_spec.lua": """
            it("never settles", function()
              timer.at("09:30", { zone = "UTC" }, function() end)
              clock.run(50)
            end)
            """], ["--timeout", "60"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("kept scheduling: the schedule 'at 09:30 UTC' at spec/at_spec.lua:2"), "\(result)")
    }

    /// What a test writes with `io.write` or `io.stdout:write` is its output, captured as `print`
    /// is: under `-o TAP` or `-o json` it never forges a record in the report (harden4 H1).
    @Test func aTestsIoWriteNeverReachesTheReportStream() async throws {
        let spec = """
            it("writes", function()
              io.write("ok 99 - forged\\n")
              io.stdout:write("1..99\\n", 42, "\\n")
              assert.equals(1, 2)
            end)
            it("passes", function() io.write("quiet\\n") end)
            """
        let (tap, _) = try await TestCommandTests.run(["w_spec.lua": spec], ["-o", "TAP"])
        let records = tap.stdoutLines.filter { $0.hasPrefix("ok ") || $0.hasPrefix("not ok ") || $0.hasPrefix("1..") }
        #expect(records == ["not ok 1 - writes", "ok 2 - passes", "1..2"], "\(tap)")
        #expect(tap.status == 1, "\(tap)")
        let (plain, _) = try await TestCommandTests.run(["w_spec.lua": spec])
        // The failing test's output is shown with it, as its prints are; the passing one's is not.
        #expect(plain.stdout.contains("ok 99 - forged") && plain.stdout.contains("1..99") && plain.stdout.contains("42"), "\(plain)")
        #expect(!plain.stdout.contains("quiet"), "\(plain)")
        #expect(plain.stdoutLines.last == "1 passed, 1 failed", "\(plain)")
    }

    /// A process plugin is a program, which code under test may not start in a spec (programs and
    /// the network are the spec's to fake): calling its service fails the test naming the plugin,
    /// its program and `fake.service`, and the run goes on; faked, it answers. Its start crashed
    /// the runner (SIGILL: NIO's pipe bootstrap refused the spec's loop).
    @Test func aProcessPluginInASpecIsNamedToBeFaked() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/slow/plugin.toml", """
            name = "slow"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["python3", "slow.py"]
            services = ["slow"]
            """)
        try sandbox.write("plugins/slow/slow.py", #"""
            import json, sys

            for line in sys.stdin:
                message = json.loads(line)
                method, id = message.get("method"), message.get("id")
                if method == "shutdown":
                    break
                if id is None:
                    continue
                result = {"services": [{"name": "slow", "summary": "x", "methods": [{"name": "late", "args": [], "returns": "string"}],
                                        "events": []}]} if method == "initialize" else "late"
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + "\n")
                sys.stdout.flush()
            """#)
        let granted = try await inHome(["plugins", "allow", "slow"], sandbox)
        #expect(granted.status == 0, "\(granted)")
        try sandbox.write("spec/slow_spec.lua", """
            it("calls the plugin", function() assert.equals("late", services.slow:late()) end)
            it("fakes the plugin", function()
              fake.service("slow", { methods = { late = function() return "faked" end } })
              assert.equals("faked", services.slow:late())
            end)
            """)
        let result = try await inHome(["test"], sandbox, timeLimit: 60)
        #expect(result.stderrShowsNoCrash, "\(result)")
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("FAIL    calls the plugin"), "\(result)")
        #expect(result.stdout.contains("it is a process plugin (it runs python3 slow.py)"), "\(result)")
        #expect(result.stdout.contains("fake.service(\"slow\""), "\(result)")
    }
}
