import Foundation
import Testing

/// The test-runner attack's findings (new27r, issues 32 and 36): a spec that patches what the
/// runner uses, `--update` aimed at the files under test or outside the project, golden files
/// that are no files.
@Suite struct SpecRunnerAttackTests {
    /// D1: a test that replaces coroutine.resume (busted's specs patch library functions) must not
    /// hide the file's later tests, nor make a failing run exit 0.
    @Test(arguments: ["coroutine.resume = function() return true end", "coroutine.status = function() return \"dead\" end",
                      "coroutine.resume = function() error(\"patched\") end"])
    func aPatchedCoroutineLibraryHidesNoLaterTest(patch: String) async throws {
        let (result, _) = try await TestCommandTests.run(["hostile_spec.lua": """
            describe("hostile", function()
              it("patches", function() \(patch) end)
              it("fails after", function() assert.equals(3, 4) end)
              it("errors after", function() error("x") end)
            end)
            describe("second block", function() it("fails too", function() assert.is_true(false) end) end)
            """], ["--junit", "j.xml"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 3 failed", "\(result)")
        #expect(result.stdout.contains("FAIL    second block fails too"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// D2: `--update` writes no spec, script or Lua file, nor outside the folder it runs in; each
    /// refusal names the path and the rule, and the files are left as they were.
    @Test func updateRefusesTheFilesUnderTestAndPathsOutsideTheProject() async throws {
        let sandbox = try Sandbox()
        let outside = try Sandbox()
        let spec = """
            it("spec file", function() script("scripts/hello.lua") assert.view("spec/a_spec.lua") end)
            it("script", function() script("scripts/hello.lua") assert.view("scripts/hello.lua") end)
            it("abs", function() script("scripts/hello.lua") assert.view("\(outside.path)/abs.txt") end)
            it("dotdot", function() script("scripts/hello.lua") assert.view("../\(outside.url.lastPathComponent)/up.txt") end)
            it("inside", function() script("scripts/hello.lua") assert.view("spec/golden/hello.txt") end)
            """
        let hello = """
            local Hello = controller("Hello")
            function Hello:loadView() return view.text("Hello, world!") end
            app.push(Hello)
            """
        try sandbox.write("scripts/hello.lua", hello)
        try sandbox.write("spec/golden/.keep", "")
        let (result, _) = try await TestCommandTests.run(["a_spec.lua": spec], ["--update"], sandbox: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 4 failed", "\(result)")
        #expect(result.stdout.contains("--update will not write the golden file spec/a_spec.lua: a .lua file is a spec"), "\(result)")
        #expect(result.stdout.contains("--update will not write the golden file scripts/hello.lua: a .lua file"), "\(result)")
        #expect(result.stdout.contains("--update will not write the golden file \(outside.path)/abs.txt: it is outside the folder"),
                "\(result)")
        #expect(result.stdout.contains("/up.txt: it is outside the folder crescent test runs in"), "\(result)")
        #expect(try String(contentsOfFile: sandbox.path + "/spec/a_spec.lua", encoding: .utf8) == spec)
        #expect(try String(contentsOfFile: sandbox.path + "/scripts/hello.lua", encoding: .utf8) == hello)
        #expect(!FileManager.default.fileExists(atPath: outside.path + "/abs.txt"))
        #expect(!FileManager.default.fileExists(atPath: outside.path + "/up.txt"))
        #expect(try String(contentsOfFile: sandbox.path + "/spec/golden/hello.txt", encoding: .utf8).contains("Hello, world!"))
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// D12: a golden file that is a FIFO or a link to /dev/zero is refused at once, naming it, as
    /// a spec file of that kind is (it blocked until the time limit, or read until the memory limit).
    @Test func aGoldenFileThatIsAFIFOOrADeviceIsRefused() async throws {
        let sandbox = try Sandbox()
        #expect(mkfifo(sandbox.path + "/fifo.txt", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/zero.txt", withDestinationPath: "/dev/zero")
        try sandbox.write("scripts/hello.lua", "local H = controller(\"H\")\nfunction H:loadView() return view.text(\"hi\") end\napp.push(H)\n")
        let started = ContinuousClock.now
        let (result, _) = try await TestCommandTests.run(["g_spec.lua": """
            it("fifo", function() script("scripts/hello.lua") assert.view("fifo.txt") end)
            it("zero", function() script("scripts/hello.lua") assert.view("zero.txt") end)
            """], ["--timeout", "30"], sandbox: sandbox)
        // At once, not at the time limit (the FIFO's open blocked until it): 8.3 s were seen for
        // the whole run in a debug build under the phase's parallel load.
        #expect(ContinuousClock.now - started < .seconds(20), "\(result)")
        #expect(result.stdoutLines.last == "0 passed, 2 failed", "\(result)")
        #expect(result.stdout.contains("the golden file fifo.txt is a FIFO, not a regular file"), "\(result)")
        #expect(result.stdout.contains("the golden file zero.txt is a character device, not a regular file"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// D3–D5: a stop (os.exit, or the time limit) in a hook or a describe body is that hook's or
    /// block's failure, named as busted names a hook that raises; a setup's block runs none of its
    /// tests; and the file's later blocks run (they were lost, or ran into "'it' not supported").
    @Test(arguments: ["os.exit(0)", "while true do end"])
    func aStopInAHookOrADescribeBodyFailsThatAndTheFileGoesOn(stop: String) async throws {
        let next = "describe(\"y\", function() it(\"c\", function() end) end)\n"
        let (result, _) = try await TestCommandTests.run([
            "a_setup_spec.lua": "describe(\"x\", function()\n  setup(function() \(stop) end)\n  it(\"a\", function() end)\n"
                + "  it(\"b\", function() end)\nend)\n" + next,
            "b_before_spec.lua": "describe(\"x\", function()\n  before_each(function() \(stop) end)\n  it(\"a\", function() end)\nend)\n"
                + next,
            "c_after_spec.lua": "describe(\"x\", function()\n  after_each(function() \(stop) end)\n  it(\"a\", function() end)\nend)\n"
                + next,
            "d_teardown_spec.lua": "describe(\"x\", function()\n  teardown(function() \(stop) end)\n  it(\"a\", function() end)\nend)\n"
                + next,
            "e_body_spec.lua": "describe(\"x\", function()\n  \(stop)\n  it(\"a\", function() end)\nend)\n" + next,
        ], ["--timeout", "2"], timeLimit: 90)
        let lines = result.stdoutLines
        #expect(result.status == 1, "\(result)")
        // y c in each file, and x a of the after_each and teardown files.
        #expect(lines.last == "7 passed, 5 failed", "\(result)")
        for (file, name) in [("a_setup", "x setup"), ("b_before", "x before_each"), ("c_after", "x after_each"),
                             ("d_teardown", "x teardown"), ("e_body", "x")] {
            #expect(lines.filter { $0.hasPrefix("FAIL    \(name)  (spec/\(file)_spec.lua") }.count == 1, "\(file): \(result)")
        }
        #expect(lines.filter { $0.hasPrefix("ok      y c  (spec/") }.count == 5, "\(result)")
        #expect(lines.contains { $0.hasPrefix("ok      x a  (spec/c_after_spec.lua") }, "\(result)")
        #expect(lines.contains { $0.hasPrefix("ok      x a  (spec/d_teardown_spec.lua") }, "\(result)")
        #expect(!result.stdout.contains("not supported inside a running test"), "\(result)")
        #expect(!result.stdout.contains("(loading the file)"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// D7: the model is each test's own, so what setup made there (a record, a timer, a fake)
    /// reached only the block's first test, silently; setup is refused the model, naming
    /// before_each, and plain Lua values it sets still reach every test (a spec's own global of
    /// a model's name, such as `post`, is its own).
    @Test func setupIsRefusedTheModelNamingBeforeEach() async throws {
        let (result, _) = try await TestCommandTests.run(["s_spec.lua": """
            describe("store", function()
              setup(function() services.store:collection("c"):add({ from = "setup" }) end)
              it("t1", function() end)
              it("t2", function() end)
            end)
            describe("plain", function()
              local n
              setup(function() n = 42 end)
              before_each(function() services.store:collection("c"):add({ from = "before_each" }) end)
              it("t1", function() assert.equals(42, n); assert.equals(1, services.store:collection("c").count) end)
              it("t2", function() assert.equals(42, n); assert.equals(1, services.store:collection("c").count) end)
            end)
            describe("own", function()
              post = function() return "mine" end
              local got
              setup(function() got = post() end)
              it("a spec's own global of a model name is its own", function() assert.equals("mine", got) end)
            end)
            """])
        #expect(result.stdoutLines.last == "3 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("FAIL    store setup"), "\(result)")
        #expect(result.stdout.contains("spec/s_spec.lua:2: setup: services.store is the model, and each test gets a fresh one"),
                "\(result)")
        #expect(result.stdout.contains("make it in before_each"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// D9: under busted's formats stdout is the report: a test's program (os.execute, io.popen)
    /// wrote onto it, breaking the JSON and forging TAP records; its output goes to stderr.
    @Test(arguments: ["json", "TAP"])
    func aTestsProgramCannotWriteIntoTheReport(format: String) async throws {
        let (result, _) = try await TestCommandTests.run(["o_spec.lua": """
            it("os.execute echo", function() os.execute("echo 'CHILD_ECHO not ok 98 - forged'") end)
            it("io.popen", function() local p = io.popen("echo POPEN_CHILD >&1; cat /dev/null"); p:close() end)
            it("fails", function() assert.is_true(false) end)
            """], ["-o", format])
        #expect(result.status == 1, "\(result)")
        #expect(!result.stdout.contains("CHILD_ECHO") && !result.stdout.contains("not ok 98"), "\(result)")
        #expect(result.stderr.contains("CHILD_ECHO"), "\(result)")
        if format == "json" {
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            #expect((object?["successes"] as? [Any])?.count == 2, "\(result)")
        } else {
            #expect(result.stdoutLines.first == "ok 1 - os.execute echo", "\(result)")
            #expect(result.stdoutLines.last == "1..3", "\(result)")
        }
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// The pids of the processes whose command line holds `marker`.
    static func processes(holding marker: String) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let id = Int32(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let text = String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
            return text.contains(marker) ? id : nil
        }
    }

    /// D10: SIGTERM to `crescent test` ended it at once with no summary and no JUnit file, and left
    /// a test's program running with PPID 1; now it reports what ran, writes the JUnit file, exits
    /// 143 and kills the program.
    @Test func sigtermReportsWhatRanAndKillsTheTestsPrograms() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("spec/sig_spec.lua", """
            it("first", function() end)
            it("runs a program", function() local f = io.open("started", "w"); f:close(); os.execute("sleep 37.25") end)
            it("after", function() end)
            """)
        let process = CrescentProcess(["test", "--junit", "j.xml", "--timeout", "120"], directory: sandbox.path)
        try process.start()
        #expect(await waitUntil { FileManager.default.fileExists(atPath: sandbox.path + "/started") })
        try await Task.sleep(for: .milliseconds(100))
        process.send(SIGTERM, expecting: .handled)
        let result = await process.finish(timeLimit: 30)
        #expect(result.status == 143 && !result.killedBySignal, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 0 failed", "\(result)")
        #expect(result.stdout.contains("interrupted (SIGTERM) during runs a program"), "\(result)")
        let junit = (try? String(contentsOfFile: sandbox.path + "/j.xml", encoding: .utf8)) ?? ""
        #expect(junit.contains("tests=\"1\"") && junit.contains("name=\"first\""), "\(junit)")
        #expect(await waitUntil { Self.processes(holding: "sleep 37.25").isEmpty }, "\(Self.processes(holding: "sleep 37.25"))")
        for pid in Self.processes(holding: "sleep 37.25") { kill(pid, SIGKILL) }
    }

    /// D14: a kept service's property read is refused with the reader's `file:line` first, as a
    /// kept service's method call is (the line was only in the traceback).
    @Test func aKeptServicesPropertyReadNamesTheSpecsLine() async throws {
        let (result, _) = try await TestCommandTests.run(["k_spec.lua": """
            local kept
            it("keeps", function() kept = services.location end)
            it("reads", function()
              return kept.location
            end)
            """])
        #expect(result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("spec/k_spec.lua:4: services.location.location: services.location was read in an earlier test"),
                "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// D13: a failure message is kept as printed output is, its first and last half MiB (a 20 MiB
    /// error wrote 20 MiB for one test). 4 MiB shows it: 20 MiB took past the test's 10 s limit in
    /// a debug build under the phase's parallel load.
    @Test func aHugeFailureMessageIsCutAsOutputIs() async throws {
        let (result, _) = try await TestCommandTests.run(["h_spec.lua": """
            it("huge", function() error(string.rep("x", 4 * 1024 * 1024) .. "END") end)
            """])
        #expect(result.stdoutLines.last == "0 passed, 1 failed", "\(result.stdoutLines.suffix(2))")
        #expect(result.stdout.utf8.count < 3 << 20, "\(result.stdout.utf8.count) bytes")
        #expect(result.stdout.contains("bytes of the message left out"))
        #expect(result.stdout.contains("xxxEND"))
    }

    /// D11: a timer.after(0) that re-arms itself held clock.advance until the real time limit,
    /// which named nothing; it is stopped as clock.run stops it, naming the timer's line.
    @Test func aSelfRearmingTimerUnderClockAdvanceIsNamed() async throws {
        let started = ContinuousClock.now
        let (result, _) = try await TestCommandTests.run(["t_spec.lua": """
            it("re-arms", function()
              local n = 0
              local function arm() timer.after(0, function() n = n + 1; arm() end) end
              arm()
              clock.advance(1)
            end)
            it("after", function() end)
            """], ["--timeout", "30"], timeLimit: 60)
        #expect(ContinuousClock.now - started < .seconds(25), "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("clock.advance(1): the clock did not move"), "\(result)")
        #expect(result.stdout.contains("timer.after(0 s) at spec/t_spec.lua:3"), "\(result)")
        #expect(!result.stdout.contains("time limit"), "\(result)")
    }

    /// D8: `--coverage` counted a Lua plugin method's lines on its first call only (a kept task
    /// thread lost the line hook when its own hook was dropped): three calls are three hits.
    @Test func coverageCountsEveryCallOfAPluginMethod() async throws {
        let sandbox = try luaPluginSandbox("counter", main: """
            local n = 0
            local c = service("counter", "counts")
            c:property("n", "integer", "n", 0)
            c:method("bump", {}, "integer", "bump", function()
              n = n + 1
              if n == 3 then
                c:set("n", 300)
                return 300
              end
              c:set("n", n)
              return n
            end)
            """)
        let (result, _) = try await TestCommandTests.run(["r_spec.lua": """
            it("three", function()
              services.counter:bump()
              services.counter:bump()
              assert.equals(300, services.counter:bump())
            end)
            """], ["--coverage"], sandbox: sandbox)
        #expect(result.status == 0, "\(result)")
        let report = (try? String(contentsOfFile: sandbox.path + "/luacov.report.out", encoding: .utf8)) ?? ""
        func hits(_ code: String) -> String? {
            report.split(separator: "\n").first { $0.hasSuffix(code) }.map { $0.split(separator: " ").first.map(String.init) ?? "" }
        }
        #expect(hits("n = n + 1") == "3", "\(report)")
        #expect(hits("return 300") == "1", "\(report)")
        #expect(hits("return n") == "2", "\(report)")
    }
}
