import Foundation
import Testing

/// Issue 39's seventh attack (new29m), defects 1, 3-8, 15-17, 26, 30, 31, 35 and 37: each test is
/// one finding, run through the `crescent` binary, so `CRESCENT_BIN` can name the binary before
/// the fixes.
@Suite struct HardeningNamedMistakesNinthATests {
    /// 1: awaiting `location:current()` under `fake.location` waited 15 s of real time (the
    /// runner took the wait for work on another thread); at the default limit the test failed,
    /// and the time limit's interrupt, still pending, failed the file "(loading the file)" in the
    /// runner's own frame, so the file's next test never ran.
    @Test func awaitingTheFakeLocationTakesNoRealTime() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/l_spec.lua", """
            describe("limit", function()
              it("l1 current", function()
                fake.location { fixes = { { lat = 1, lon = 2 } } }
                local r = services.location:current()
                assert.equals(1, r.lat)
              end)
              it("l2 current after start, then the next fix", function()
                fake.location { fixes = { { lat = 1, lon = 2 }, { lat = 3, lon = 4 } }, interval = 60 }
                services.location:start()
                assert.equals(1, services.location:current().lat)
                clock.advance(3)
                assert.equals(1, services.location:current().lat)   -- fresh: answered at once
                clock.advance(7)
                assert.equals(3, services.location:current().lat)   -- waits for the next fix
                assert.equals(60, clock.now())
              end)
              it("l3 a replay without a fix", function()
                fake.location { fixes = {} }
                local r, e = services.location:current()
                assert.is_nil(r)
                assert.equals("unavailable", e.code)
              end)
              it("l4 after", function() assert.equals(1, 1) end)
            end)
            """)
        // Each current() waited 15 s of real time before (a 0.35 s test now): with a limit of
        // 8 s, every one of them would fail.
        let result = try await crescent(["test", "--timeout", "8", "spec/l_spec.lua"], in: sandbox, timeLimit: 90)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.last == "4 passed, 0 failed", "\(result)")
        #expect(!result.stdout.contains("(loading the file)") && !result.stdout.contains("[crescent testing]"), "\(result)")
    }

    /// 1: a test stopped at its time limit while it waited on a call answered on another thread
    /// (the geocoder's first lookup loads its data) left the interrupt pending: the runner's next
    /// step met it, failing the file "(loading the file)" and running none of its other tests.
    @Test func aTestStoppedWhileItWaitsFailsAlone() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/g_spec.lua", """
            describe("g", function()
              it("g1 waits", function() for _ = 1, 5000 do services.geocoder:search("Paris") end end)
              it("g2 after", function() assert.equals(1, 1) end)
            end)
            """)
        // A limit the file's loading cannot reach on a loaded machine; the waits take longer.
        let result = try await crescent(["test", "--timeout", "1", "spec/g_spec.lua"], in: sandbox, timeLimit: 60)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("FAIL    g g1 waits  (spec/g_spec.lua:2)\n        the test was still running after its time limit "
                                       + "of 1 s (real time) and was stopped"), "\(result)")
        #expect(result.stdout.contains("ok      g g2 after"), "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
        #expect(!result.stdout.contains("(loading the file)") && !result.stdout.contains("[crescent testing]"), "\(result)")
    }

    /// 3, 5: a fake's handle method called with `.` failed inside the fakes
    /// (`[crescent fakes]:339: attempt to concatenate a nil value`) or did nothing.
    @Test func aFakeHandleMethodCalledWithADotSaysCallItWithAColon() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/f_spec.lua", """
            it("emit", function()
              local f = fake.service("location", {})
              f.emit("didFail", {})
            end)
            it("set", function()
              local f = fake.service("location", {})
              f.set("updating", true)
            end)
            it("fail", function()
              local f = fake.location { fixes = { { lat = 1, lon = 2 } } }
              f.fail("unavailable")
            end)
            it("colon", function()
              local f = fake.location { fixes = { { lat = 1, lon = 2 } } }
              f:fail("unavailable")
              local s = fake.service("location", {})
              s:set("updating", true)
            end)
            """)
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 3 failed", "\(result)")
        #expect(result.stdout.contains("spec/f_spec.lua:3: fake:emit(event[, payload]): call it with ':' on the fake.service handle "
                                       + "(h:emit(\"name\", { ... })), got string as self"), "\(result)")
        #expect(result.stdout.contains("spec/f_spec.lua:7: fake:set(property, value): call it with ':' on the fake.service handle "
                                       + "(h:set(\"name\", value)), got string as self"), "\(result)")
        #expect(result.stdout.contains("spec/f_spec.lua:11: h:fail(code[, message]): call it with ':' on the fake.location handle "
                                       + "(h:fail(\"timeout\")), got string as self"), "\(result)")
        #expect(!result.stdout.contains("[crescent fakes]:"), "\(result)")
    }

    /// 4, 26: `fake:process { ... }` took the `fake` module as the answers, and `clock:advance(1)`
    /// showed the clock table as the seconds; timer:after and json:encode say "call it with '.'".
    @Test func aFakeOrClockFunctionCalledWithAColonSaysCallItWithADot() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/d_spec.lua", """
            it("process", function()
              fake:process { ["*"] = { status = 7 } }
            end)
            it("http", function() fake:http { ["GET http://x/"] = { status = 200 } } end)
            it("location", function() fake:location { fixes = {} } end)
            it("service", function() fake:service("location", {}) end)
            it("advance", function() clock:advance(1) end)
            """)
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "0 passed, 5 failed", "\(result)")
        #expect(result.stdout.contains("spec/d_spec.lua:2: fake.process: call it with '.', as fake.process { [\"git pull\"] = { ... } }, not ':'"),
                "\(result)")
        #expect(result.stdout.contains("spec/d_spec.lua:4: fake.http: call it with '.', as fake.http { [\"GET url\"] = { ... } }, not ':'"),
                "\(result)")
        #expect(result.stdout.contains("spec/d_spec.lua:5: fake.location: call it with '.', as fake.location { fixes = { ... } }, not ':'"),
                "\(result)")
        #expect(result.stdout.contains("spec/d_spec.lua:6: fake.service: call it with '.', as fake.service(name, { ... }), not ':'"),
                "\(result)")
        #expect(result.stdout.contains("spec/d_spec.lua:7: clock.advance: call it with '.', as clock.advance(seconds), not ':'"), "\(result)")
    }

    /// 6, 7, 8: a `fake.process` function answer was not checked as a static one: a misspelled
    /// key gave status 0, a number or nothing an internal error the code under test could
    /// swallow, and a misspelled field of the request read nil.
    @Test func aFakeProcessFunctionAnswerIsCheckedAsAStaticOne() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/p_spec.lua", """
            it("misspelled key", function()
              fake.process { ["*"] = function(req) return { stauts = 1 } end }
              local r, e = services.process:run({ "ls" })
            end)
            it("a number", function()
              fake.process { ["*"] = function(req) return 42 end }
              local r, e = services.process:run({ "ls" })
            end)
            it("nothing", function()
              fake.process { ["*"] = function(req) end }
              local r, e = services.process:run({ "ls" })
            end)
            it("request field", function()
              fake.process { ["*"] = function(req) return { status = 0, stdout = tostring(req.comand) } end }
              local r, e = services.process:run({ "ls" })
            end)
            it("request written", function()
              fake.process { ["*"] = function(req) req.command = "x"; return { status = 0 } end }
              local r, e = services.process:run({ "ls" })
            end)
            it("fine", function()
              fake.process { ["*"] = function(req)
                local seen = {}
                for k in pairs(req) do seen[#seen + 1] = k end
                table.sort(seen)
                return { status = 3, stdout = req.command .. " " .. req.argv[1] .. " " .. tostring(req.cwd) .. " " .. table.concat(seen, ",") }
              end }
              local r = services.process:run({ "ls" })
              assert.equals(3, r.status)
              assert.equals("ls ls nil argv,command,env,shell", r.stdout)
            end)
            """)
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 5 failed", "\(result)")
        #expect(result.stdout.contains("spec/p_spec.lua:3: fake.process answer for ls's function: its table: unknown key 'stauts' (keys: "
                                       + "duration, error, signal, status, stderr, stdout, timedOut; did you mean 'status'?)"), "\(result)")
        #expect(result.stdout.contains("spec/p_spec.lua:7: fake.process answer for ls's function: must answer a table { status, stdout, "
                                       + "stderr } or a string (its stdout), got number"), "\(result)")
        #expect(result.stdout.contains("spec/p_spec.lua:11: fake.process answer for ls's function: must answer a table { status, stdout, "
                                       + "stderr } or a string (its stdout), got nothing"), "\(result)")
        #expect(result.stdout.contains("spec/p_spec.lua:15: fake.process answer for ls raised: spec/p_spec.lua:14: fake.process: the "
                                       + "request has no field 'comand' (fields: argv, command, cwd, env, shell, stdin; did you mean "
                                       + "'command'?)"), "\(result)")
        #expect(result.stdout.contains("spec/p_spec.lua:19: fake.process answer for ls raised: spec/p_spec.lua:18: fake.process: the "
                                       + "request is read-only (it is what the code under test ran); cannot set \"command\""), "\(result)")
    }

    /// 15: the stubs named `crescent.error`, a class no stub declares (it is `crescent.Error`),
    /// and typed didExit's and didOutput's fields `any`.
    @Test func theStubsNameTheErrorClassAndTypeProcessEvents() async throws {
        let sandbox = try Sandbox()
        let made = try await crescent(["stubs", "--out", "types"], in: sandbox)
        #expect(made.status == 0, "\(made)")
        let folder = sandbox.path + "/types"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".lua") }.sorted()
        var declared: Set<String> = []
        var all = ""
        for file in files {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            all += text
            for line in text.split(separator: "\n") where line.hasPrefix("---@class ") {
                declared.insert(String(line.dropFirst("---@class ".count).prefix { $0 != " " && $0 != ":" }))
            }
            // One file a call: luac's -p of two files would check them as one chunk.
            let checked = try await crescent(["-p", folder + "/" + file], executable: "/usr/bin/luac5.4", in: sandbox)
            #expect(checked.status == 0, "\(file): \(checked)")
        }
        #expect(!all.contains("crescent.error"), "\(all)")
        #expect(declared.contains("crescent.Error"), "\(declared.sorted())")
        #expect(all.contains("{ status: integer?, signal: string?, timedOut: boolean, error: crescent.Error? }"), "\(all)")
        #expect(all.contains("{ stream: string, line: string, truncated: boolean }"), "\(all)")
    }

    /// 16: `crescent test --memory-limit -1` ran the specs without a word.
    @Test func aNegativeMemoryLimitOfATestRunIsAUsageError() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/a_spec.lua", "it(\"a\", function() end)\n")
        let result = try await crescent(["test", "--memory-limit", "-1"], in: sandbox)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("--memory-limit must be 0 (no limit) or a number of MiB, got -1"), "\(result)")
        #expect(result.stderr.contains("Usage: crescent test"), "\(result)")
        #expect(!result.stdout.contains("passed"), "\(result)")
    }

    /// 17: `.busted`'s `_all` task was ignored; busted merges it into every task.
    @Test func bustedAllTaskIsMergedIntoTheDefault() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/q_spec.lua", """
            it("q1 #fast", function() end)
            it("q2", function() end)
            """)
        try sandbox.write(".busted", "return { _all = { tags = \"fast\" }, default = { ROOT = { \"spec/q_spec.lua\" } } }\n")
        let merged = try await crescent(["test"], in: sandbox)
        #expect(merged.status == 0, "\(merged)")
        #expect(merged.stdoutLines.last == "1 passed, 0 failed", "\(merged)")
        // The task's own option wins over _all's, as in busted.
        try sandbox.write(".busted", "return { _all = { tags = \"slow\" }, default = { tags = \"fast\" } }\n")
        let own = try await crescent(["test"], in: sandbox)
        #expect(own.stdoutLines.last == "1 passed, 0 failed", "\(own)")
        // _all alone is read too, and its keys are checked as a task's.
        try sandbox.write(".busted", "return { _all = { tags = \"fast\", filtr = \"x\" } }\n")
        let alone = try await crescent(["test"], in: sandbox)
        #expect(alone.stdoutLines.last == "1 passed, 0 failed", "\(alone)")
        #expect(!alone.stderr.contains("no task 'default'"), "\(alone)")
        #expect(alone.stderr.contains(".busted: _all.filtr is not an option of a task"), "\(alone)")
    }

    /// 30: a failure showed each error of the code under test twice: under "the code under test
    /// reported an error:" and again under "output:".
    @Test func aFailureShowsEachErrorOfTheCodeUnderTestOnce() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/c_spec.lua", """
            it("cron", function()
              print("before")
              timer.cron("* * * * *", function() local x = nil; return x.y end)
              clock.advance(120)
            end)
            """)
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        let error = "error in timer callback: spec/c_spec.lua:3: attempt to index a nil value (local 'x')"
        #expect(result.stdout.components(separatedBy: error).count - 1 == 2, "two firings, each once: \(result)")
        #expect(result.stdout.contains("the code under test reported an error:"), "\(result)")
        #expect(result.stdout.contains("output:\n          before"), "\(result)")
    }

    /// 31: `fake.service("location", { methods = { strat = ... } })` listed `current` alone: a
    /// started service's start and stop are a fake's to give too, and `strat` is one of them.
    @Test func aFakeOfAStartedServiceTakesStartAndStop() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/s_spec.lua", """
            it("strat", function() fake.service("location", { methods = { strat = function() end } }) end)
            it("start", function()
              local started = 0
              fake.service("location", { methods = { start = function() started = started + 1 end } })
              services.location:start()
              assert.equals(1, started)
            end)
            """)
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("spec/s_spec.lua:1: fake.service(\"location\"): 'strat' is not a method of location (methods: current, "
                                       + "start, stop; did you mean 'start'?)"), "\(result)")
    }

    /// 31, 35: `assert.is_ture` had no "did you mean", `assert.error(42)` read as Lua's `error`.
    @Test func assertionMistakesAreNamedWithTheAssertion() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/b_spec.lua", """
            it("ture", function() assert.is_ture(true) end)
            it("error", function() assert.error(42) end)
            it("has_error", function() assert.has_error("x") end)
            """)
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/b_spec.lua:1: assert.is_ture: there is no assertion or modifier 'ture' (did you mean true?)"),
                "\(result)")
        #expect(result.stdout.contains("spec/b_spec.lua:2: bad argument #1 to 'assert.error' (the function that raises expected, got "
                                       + "number: wrap the code that raises in a function, as assert.error(function() f(x) end))"), "\(result)")
        #expect(result.stdout.contains("spec/b_spec.lua:3: bad argument #1 to 'assert.error' (the function that raises expected, got string"),
                "\(result)")
    }

    /// 37: several keys in one string (`press("down enter")`, `app.press("rr")`,
    /// `crescent send --key rr`) were only an unknown key.
    @Test func severalKeysInOneStringSayGiveEachItsOwnArgument() async throws {
        let controller = """
            local C = controller("C")
            function C:loadView() return view.list { id = "l", items = { "a", "b" } } end
            function C:r() print("r") end
            function C:viewDidLoad() self:key("r", "r") end

            """
        let sandbox = try Sandbox()
        try sandbox.write("app.lua", controller + "app.push(C)\n")
        try sandbox.write("spec/m_spec.lua", """
            before_each(function() script("app.lua") end)
            it("words", function() press("down enter") end)
            it("letters", function() press("rr") end)
            it("misspelled", function() press("dwn") end)
            it("fine", function() press("down", "enter") end)
            """)
        let tested = try await crescent(["test"], in: sandbox)
        #expect(tested.stdoutLines.last == "1 passed, 3 failed", "\(tested)")
        #expect(tested.stdout.contains("spec/m_spec.lua:2: bad argument #1 to 'press' (unknown key 'down enter'; give each key as its own "
                                       + "argument: press(\"down\", \"enter\"); key names are"), "\(tested)")
        #expect(tested.stdout.contains("spec/m_spec.lua:3: bad argument #1 to 'press' (unknown key 'rr'; give each key as its own "
                                       + "argument: press(\"r\", \"r\"); key names are"), "\(tested)")
        #expect(tested.stdout.contains("spec/m_spec.lua:4: bad argument #1 to 'press' (unknown key 'dwn'; did you mean 'down'?"), "\(tested)")

        let script = try await runScript(controller + "app.push(C)\napp.press(\"rr\")\n", options: ["--ui", "plain"])
        #expect(script.stderr.contains("script.lua:6: bad argument #1 to 'app.press' (unknown key 'rr'; give each key as its own argument: "
                                       + "app.press(\"r\", \"r\")"), "\(script)")

        let remote = try Sandbox()
        try remote.write("host.lua", controller + "app.push(C)\n")
        let host = try await ListeningHost(script: "host.lua", name: "ninth-a", options: ["--ui", "plain", "--keep-running"], sandbox: remote)
        let sent = try await host.crescentCommand(["send", "ninth-a", "--key", "rr"])
        #expect(sent.status != 0, "\(sent)")
        #expect(sent.stderr.contains("unknown key 'rr'; give each key as its own word: crescent send --key r r"), "\(sent)")
        _ = await host.stop()
    }
}
