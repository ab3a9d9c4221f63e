import Foundation
import Testing

/// The newcomer probe of issue 39 (/work/attack/newcomer/REPORT.md): each mistake a new script
/// author made that was silent or misleading, now named at its line with the fix.
@Suite struct HardeningNewcomerTests {
    /// Finding 1: a `self:command` whose options are refused registers nothing, so `help` and an
    /// unknown command still list the commands (they raised inside the host before); the
    /// refused type and a misspelled method name get the closest name. Finding 7: the unknown
    /// command's list is on its one line (a remote send and the status line show only that).
    @Test func aRefusedCommandLeavesHelpWorking() async throws {
        let result = try await runScript("""
            local Hello = controller("Hello")
            function Hello:loadView() return view.stack { view.text { id = "t", text = "hi" } } end
            function Hello:viewDidLoad()
              self:command("add", "add", "add one", { args = { "item: string", "qty: integer?" } })
              self:command("bad", "add", "x", { args = { "item: strin" } })
            end
            function Hello:add(item, qty) print("added", item, qty) end
            function Hello:viewDidAppear()
              print(select(2, pcall(self.command, self, "more", "addd", "x")))
            end
            app.push(Hello)
            """, stdinText: "help\nad milk\nadd milk 2\nadd oat milk 2\nquit\n")
        #expect(result.stdout.contains("commands of Hello:\n  add   add one\n  help  list the commands\n  quit  exit\n"), "\(result)")
        #expect(result.stdoutLines.filter { $0.hasPrefix("added") } == ["added\tmilk\t2"], "\(result)")
        // Finding 5: a word too many is named, not dropped.
        #expect(result.stderr.contains("command 'add': takes 2 arguments (item: string, qty: integer?), got 3 (quote an argument with spaces: \"oat milk\")"), "\(result)")
        #expect(result.stdout.contains("command 'more': Hello has no method 'addd'; did you mean 'add'?"), "\(result)")
        #expect(result.stderr.contains("got item: strin; did you mean 'string'?)"), "\(result)")
        #expect(result.stderr.contains("unknown command 'ad'; commands of Hello: add, help, quit; did you mean 'add'?"), "\(result)")
        #expect(!result.stderr.contains(#/\[crescent controllers\w*\]:/#), "\(result)")
        #expect(!result.stderr.contains("attempt to index a nil value"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    typealias Case = MisspelledNameTests.Case

    static let cases: [Case] = [
        Case(code: "fix.speeed", starts: "no field 'speeed' on location (fields: lat, lon, time, provider, altitude, speed, ",
             ends: "; did you mean 'speed'?)"),
        Case(code: "places[1].contry", starts: "no field 'contry' on placemark (fields: name, locality, ",
             ends: "; did you mean 'country'?)"),
        Case(code: "err.mesage", starts: "no field 'mesage' on error (fields: code, message, service, method",
             ends: "; did you mean 'message'?)"),
        Case(code: "done.reslt", starts: "no field 'reslt' on Task (fields: done, result, error",
             ends: "; did you mean 'result'?)"),
        Case(code: "later.firngs", starts: "no field 'firngs' on Timer (fields: active, interval, repeats, firings, schedule",
             ends: "; did you mean 'firings'?)"),
        Case(code: "sub.actve", starts: "no field 'actve' on Subscription (fields: active, ",
             ends: "; did you mean 'active'?)"),
        Case(code: "sub:cancle()", starts: "no method 'cancle' on Subscription (methods: cancel",
             ends: "; did you mean 'cancel'?)"),
        Case(code: "fix.frobnicate", starts: "no field 'frobnicate' on location (fields: lat, ", ends: ")"),
    ]

    /// Finding 2: the README's promise ("a property or method of a service or model object")
    /// for the values services hand out and the host's own handles; declared fields a value
    /// lacks still read nil.
    @Test func aMisspelledFieldOfAModelOrHandleIsNamed() async throws {
        let header = """
            task(function()
              local fix = services.location:current()
              local places = services.geocoder:reverse({ lat = 48.85, lon = 2.35 })
              local _, err = services.geocoder:reverse({ lat = 123, lon = 0 })
              local done = task(function() end)
              local later = timer.after(60, print)
              local sub = on("my.event", print)
            """
        let lines = header.split(separator: "\n", omittingEmptySubsequences: false).count
        let source = header + "\n" + HardeningNewcomerModelTests.printing(Self.cases) + """

              print(fix.altitude, places[1].country, places[1].distance ~= nil, err.code, done.done, later.firings, sub.active)
              later:cancel(); sub:cancel()
            end)
            """
        let result = try await runScript(source, options: ["--data-dir", "data", "--location", "fixed:48.85,2.35"])
        #expect(result.status == 0, "\(result)")
        let printed = result.stdoutLines
        HardeningNewcomerModelTests.expectNamed(Self.cases, in: printed, firstLine: lines + 1)
        #expect(printed.last == "nil\tFrance\ttrue\tinvalid_argument\ttrue\t0\ttrue", "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// Finding 4: the fakes check what a spec gives them as the real services check their
    /// options, at the spec's line: a misspelled `status` no longer turns a fake 404 into a 200.
    @Test func theFakesNameAMisspelledOptionRouteMethodOrEvent() async throws {
        let cases: [(code: String, message: String)] = [
            ("fake.location { fixs = { { lat = 1, lon = 2 } } }",
             "fake.location: unknown key 'fixs' (keys: fixes, interval, track; did you mean 'fixes'?)"),
            ("fake.location({ lat = 1, lon = 2 })",
             "fake.location: got a fix where the options go; give the fixes as a list: fake.location { fixes = { { lat = 1, lon = 2 } } }"),
            ("fake.http { [\"GETT http://x/\"] = { status = 200 } }",
             "fake.http: route GETT http://x/: 'GETT' is not an HTTP method (methods: DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT; did you mean 'GET'?)"),
            ("fake.http { [\"GET http://127.0.0.1:1/\"] = { stats = 404 } }",
             "fake.http: route GET http://127.0.0.1:1/: unknown key 'stats' (keys: body, error, headers, status; did you mean 'status'?)"),
            ("fake.process { [\"git pull\"] = { stauts = 0 } }",
             "fake.process: git pull: unknown key 'stauts' (keys: duration, error, signal, status, stderr, stdout, timedOut; did you mean 'status'?)"),
            ("fake.service(\"geocoder\", { methods = { revers = function() end } })",
             "fake.service(\"geocoder\"): 'revers' is not a method of geocoder (methods: "),
            ("fake.service(\"location\", { methodz = {} })",
             "fake.service: unknown key 'methodz' (keys: events, methods, properties, summary; did you mean 'methods'?)"),
            ("fake.service(\"location\", {}):emit(\"didUpdate\", {})",
             "emit: 'didUpdate' is not an event of location (events: "),
            ("fake.service(\"location\", {}):set(\"locaton\", { lat = 1, lon = 2 })",
             "set: 'locaton' is not a property of location (properties: "),
            ("fake.locaton {}", "no fake 'locaton' (fakes: http, location, process, service; did you mean 'location'?)"),
            ("clock.advanc(1)", "no function 'clock.advanc' (clock: advance, now, run; did you mean 'advance'?)"),
        ]
        var lines = cases.enumerated().map { "it(\"case \($0.offset + 1)\", function() \($0.element.code) end)" }
        lines.append("""
            it("right", function() fake.location { fixes = { { lat = 1, lon = 2 } }, interval = 5 }; \
            fake.http { ["GET http://x/"] = { status = 404, body = "" } }; \
            fake.service("geocoder", { methods = { reverse = function() return {} end } }); \
            fake.service("location", { properties = { updating = false } }):emit("didFail", { code = "unavailable", message = "x" }) end)
            """)
        let (result, _) = try await TestCommandTests.run(["mist_spec.lua": lines.joined(separator: "\n")])
        #expect(result.stdoutLines.last == "1 passed, \(cases.count) failed", "\(result)")
        for (index, expected) in cases.enumerated() {
            #expect(result.stdout.contains("spec/mist_spec.lua:\(index + 1): " + expected.message), "\(expected.code)\n\(result)")
        }
        #expect(!result.stdout.contains("[crescent fakes]"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// Finding 6: a controller that pushes itself from viewDidLoad is stopped at a bounded depth
    /// with an error that says what it does, instead of growing the stack until killed.
    @Test func aControllerPushingItselfFromViewDidLoadIsStopped() async throws {
        let result = try await runScript("""
            local T = controller("T")
            function T:loadView() return view.text { text = "hi" } end
            function T:viewDidLoad() app.push(T) end
            app.push(T)
            """, stdinText: "")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("error in T:viewDidLoad: script.lua:3: app.push: the navigation stack is 100 controllers deep (T ×100); "
                                       + "a controller that pushes from a lifecycle step"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// Finding 8: crescent's own options after the script are the script's (as lua passes them);
    /// a note says so and shows where to put them.
    @Test func hostOptionsAfterTheScriptAreNamed() async throws {
        let result = try await runScript("print(...)", arguments: ["--location", "fixed:1,2", "--verbose", "--ui=plain"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["--location\tfixed:1,2\t--verbose\t--ui=plain"], "\(result)")
        #expect(result.stderrLines.filter { !$0.isEmpty } == [
            "crescent: note: --location fixed:1,2 comes after script.lua, so it is the script's argument (arg), not crescent's option; "
                + "to give it to crescent, put it before the script: crescent --location fixed:1,2 script.lua",
        ], "\(result)")
        let quiet = try await runScript("print(...)", arguments: ["--verbose", "x"])
        #expect(quiet.stderr.isEmpty, "\(quiet)")
    }

    /// Finding 9: the filter the new project's spec names in its comment matches one of its tests.
    @Test func theFilterInANewProjectsSpecMatchesATest() async throws {
        let sandbox = try Sandbox()
        let made = try await crescent(["init", "demo"], in: sandbox)
        #expect(made.status == 0, "\(made)")
        let spec = try String(contentsOfFile: sandbox.path + "/demo/spec/main_spec.lua", encoding: .utf8)
        let words = spec.split(separator: "\n").first { $0.contains("--filter") }?.split(separator: " ").map(String.init) ?? []
        let filter = words.firstIndex(of: "--filter").flatMap { $0 + 1 < words.count ? words[$0 + 1] : nil }
        let named = try #require(filter, "\(spec)")
        let tested = try await crescent(["test", "--filter", named], in: sandbox, directory: sandbox.path + "/demo", timeLimit: 60)
        #expect(tested.status == 0, "\(tested)")
        #expect(tested.stdoutLines.last == "1 passed, 0 failed", "\(tested)")
    }

    /// Finding 21: a one- or two-letter word is not matched by its letters (`to` is one edit from
    /// `no`); the chain without it is suggested instead.
    @Test func anAssertionWithAWordTooManySuggestsTheAssertion() async throws {
        let (result, _) = try await TestCommandTests.run(["assert_spec.lua": """
            it("equal_to", function() assert.equal_to(1, 1) end)
            it("caled", function() local s = spy.new(); s(); assert.spy(s).was.caled() end)
            """])
        #expect(result.stdoutLines.last == "0 passed, 2 failed", "\(result)")
        #expect(result.stdout.contains("spec/assert_spec.lua:1: assert.equal_to: there is no assertion or modifier 'to' (did you mean assert.equal?)"), "\(result)")
        #expect(result.stdout.contains("modifier 'caled' (did you mean called"), "\(result)")
    }

    /// Finding 10: help(Controller) and help(self) document the controller; help("services.x")
    /// is help("x").
    @Test func helpDocumentsAControllerAndAServiceNamedAsScriptsReadIt() async throws {
        let result = try await runScript("""
            local T = controller("T")
            function T:loadView() return view.text { text = "hi" } end
            function T:viewDidLoad() self:command("refresh", "refresh", "look again") end
            function T:refresh() end
            help(T)
            help("services.geocoder")
            function T:viewDidAppear() help(self) app.exit(0) end
            app.push(T)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("controller T\nlifecycle steps it has: loadView, viewDidLoad (of init, "), "\(result)")
        #expect(result.stdout.contains("methods: refresh\nkeys and commands are bound by self:key"), "\(result)")
        #expect(result.stdout.contains("commands (after ':'):\n  refresh  look again"), "\(result)")
        #expect(result.stdout.contains("services.geocoder"), "\(result)")
        #expect(!result.stdout.contains("no documentation"), "\(result)")
    }

    /// Finding 5: in a spec, send of an unknown command or with a word too many fails the test at
    /// its line (it only warned, and the test passed).
    @Test func aSpecsSendOfAWrongCommandFailsTheTest() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("main.lua", """
            local T = controller("T")
            function T:loadView() return view.text { id = "t", text = "hi" } end
            function T:viewDidLoad() self:command("add", "add", "add one", { args = { "item: string" } }) end
            function T:add(item) self.view.t.text = item end
            app.push(T)
            """)
        let (result, _) = try await TestCommandTests.run(["send_spec.lua": """
            it("unknown", function() script("main.lua"); send("ad", "x") end)
            it("too many", function() script("main.lua"); send("add", "oat", "milk") end)
            it("right", function() script("main.lua"); send("add", "milk"); assert.matches("milk", view_text()) end)
            """], sandbox: sandbox)
        #expect(result.stdoutLines.last == "1 passed, 2 failed", "\(result)")
        #expect(result.stdout.contains("spec/send_spec.lua:1: send: unknown command 'ad'; commands of T: add, help, quit; did you mean 'add'?"), "\(result)")
        #expect(result.stdout.contains("spec/send_spec.lua:2: send: command 'add': takes 1 argument (item: string), got 2"), "\(result)")
    }

    /// Finding 16: helpers named after a step with a word of their own are not warned about;
    /// misspellings still are.
    @Test func helpersNamedAfterALifecycleStepAreNotWarnedAbout() async throws {
        let result = try await runScript("""
            local T = controller("T")
            function T:reloadView() end
            function T:onInit() end
            function T:initUI() end
            function T:unit() end
            function T:loadview() end
            function T:viewWillApear() end
            function T:Init() end
            function T:dealoc() end
            function T:viewDidAppear() app.exit(0) end
            function T:deallocate() end
            function T:initialize() end
            function T:viewDidLoaded() end
            app.push(T)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrLines.filter { !$0.isEmpty } == [
            "crescent: warning: script.lua:8: T:Init is not a lifecycle step, so it is never called as one; did you mean 'init'?",
            "crescent: warning: script.lua:9: T:dealoc is not a lifecycle step, so it is never called as one; did you mean 'dealloc'?",
            "crescent: warning: script.lua:6: T:loadview is not a lifecycle step, so it is never called as one; did you mean 'loadView'?",
            "crescent: warning: script.lua:13: T:viewDidLoaded is not a lifecycle step, so it is never called as one; did you mean 'viewDidLoad'?",
            "crescent: warning: script.lua:7: T:viewWillApear is not a lifecycle step, so it is never called as one; did you mean 'viewWillAppear'?",
        ], "\(result)")
    }

    /// Finding 12: an observer with no method named after an event is warned about (methods are
    /// looked up at each event, so one added later is still called: a warning, not an error).
    @Test func anObserverWithNoEventMethodIsNamed() async throws {
        let result = try await runScript("""
            services.location:addObserver({ didUpdateLocation = function() end })
            services.location:addObserver({ didFail = function() end })
            print("ok")
            """, options: ["--location", "fixed:1,2"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["ok"], "\(result)")
        // The run's end adds that location was never started (attack new25 D33): a note of its own.
        let never = result.stderrLines.filter { $0.contains("was never started") }
        #expect(never == ["crescent: warning: script.lua:1: 2 subscriptions to location were live when the run ended, but location was never "
                          + "started, so no update came: services.location:start() starts it (a subscription alone keeps nothing running)"],
                "\(result)")
        let warnings = result.stderrLines.filter { !$0.isEmpty && !$0.contains("was never started") }
        #expect(warnings.count == 1, "\(result)")
        let first = warnings.first ?? ""
        #expect(first.hasPrefix("crescent: warning: script.lua:1: location:addObserver(observer): the observer has no method named after an event "
                                + "of location, so it is not called until it has one (events: "), "\(result)")
        #expect(first.hasSuffix("; did you mean 'didUpdateLocations' for 'didUpdateLocation'?)"), "\(result)")
    }

    /// Finding 11: a .busted option or task that neither busted nor crescent reads is warned
    /// about with the closest name, and a wrong type too (all were ignored silently).
    @Test func aMisspelledBustedOptionIsWarnedAbout() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(".busted", "return { default = { filtr = \"x\", tags = 5, verbose = true } }")
        let (result, _) = try await TestCommandTests.run(["a_spec.lua": "it(\"runs\", function() end)"], sandbox: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrLines.filter { !$0.isEmpty } == [
            "crescent: warning: .busted: default.filtr is not an option of a task (crescent test reads: ROOT, tags, exclude-tags, filter, output, coverage; did you mean 'filter'?)",
            "crescent: warning: .busted: default.tags must be a string or a list of strings, got a number",
        ], "\(result)")
        try sandbox.write(".busted", "return { defualt = { filter = \"x\" } }")
        let (misnamed, _) = try await TestCommandTests.run([:], sandbox: sandbox)
        #expect(misnamed.stderr.contains("crescent: warning: .busted: no task 'default', so crescent test reads none of its options (tasks: defualt; did you mean 'default' for 'defualt'?)"), "\(misnamed)")
    }

    /// Findings 22, 23 and 25 (some): a bad zone is named as argument #2 of timer.at, a lifecycle
    /// step that is not a function is warned about, and help of a misspelled name suggests one.
    @Test func smallerMistakesAreNamedWhereTheyAre() async throws {
        let result = try await runScript("""
            print(select(2, pcall(timer.at, "09:30", { zone = "Europe/Pari" }, print)))
            help("obsrve")
            print(select(2, pcall(function() timer.evry(1, print) end)))
            print(select(2, pcall(function() log.warning("x") end)))
            local T = controller("T")
            T.init = 5
            function T:viewDidAppear() app.exit(0) end
            app.push(T)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.first?.hasPrefix("bad argument #2 to 'timer.at' (zone 'Europe/Pari' is not an IANA time zone") == true, "\(result)")
        #expect(result.stdout.contains("help: no documentation for 'obsrve' (did you mean 'observe'? try help() for the list)"), "\(result)")
        #expect(result.stdout.contains("script.lua:3: no function 'timer.evry' (timer: after, at, cron, every; did you mean 'every'?)"), "\(result)")
        #expect(result.stdout.contains("script.lua:4: no function 'log.warning' (log: "), "\(result)")
        #expect(result.stdout.contains("; did you mean 'warn'?)"), "\(result)")
        #expect(result.stderrLines.filter { !$0.isEmpty } == [
            "crescent: warning: script.lua:5: T.init is a number, so it is never called: a lifecycle step is a method (function T:init() ... end)",
        ], "\(result)")
    }
}
