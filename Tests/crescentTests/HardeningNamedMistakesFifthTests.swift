import Foundation
import Testing

/// Issue 39's leftovers from the fourth attack (new25), part 2: mistakes that were still silent
/// or named no place or fix. Each test is one finding (its number in the report), run through the
/// `crescent` binary.
@Suite struct HardeningNamedMistakesFifthTests {
    /// D31: a controller made but never pushed ended the run at once, with no output and no note.
    @Test func aControllerMadeButNeverPushedIsNamedWhenTheRunEnds() async throws {
        let forgot = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "never shown" } end
            """, stdinText: "quit\n", options: ["--ui", "plain"])
        #expect(forgot.status == 0, "\(forgot)")
        #expect(forgot.stderr.contains("crescent: warning: script.lua:1: controller C was made but never pushed, so the run ended "
                                       + "without showing it: app.push(C) shows it"), "\(forgot)")
        let two = try await runScript("""
            local A = controller("A")
            local B = controller("B", A)
            """, options: ["--ui", "plain"])
        #expect(two.stderr.contains("script.lua:1: controllers A, B were made but none was pushed, so the run ended without showing one: "
                                    + "app.push(A) shows A"), "\(two)")
        let pushed = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "shown" } end
            app.push(C)
            timer.after(0, function() app.pop() end)
            """, options: ["--ui", "plain"])
        #expect(pushed.stdout.contains("shown") && !pushed.stderr.contains("never pushed"), "\(pushed)")
    }

    /// D22: an error in a `__gc` finalizer vanished, in a run (collected while it ran or as its VM
    /// closed) and in a test whose body collected it.
    @Test func anErrorInAFinalizerIsReportedAndFailsTheRun() async throws {
        let collected = try await runScript("""
            local t = setmetatable({}, { __gc = function() error("gc boom") end }); t = nil
            timer.after(0.01, function() collectgarbage() collectgarbage() print("after gc") end)
            """)
        #expect(collected.status == 1, "\(collected)")
        #expect(collected.stderr.contains("crescent: error in a __gc finalizer: script.lua:1: gc boom"), "\(collected)")
        #expect(collected.stdout.contains("after gc"), "\(collected)")
        let atExit = try await runScript("""
            kept = setmetatable({}, { __gc = function() error("end boom") end })
            print("ran")
            """)
        #expect(atExit.status == 1, "\(atExit)")
        #expect(atExit.stderr.contains("crescent: error in a __gc finalizer as the run ended: script.lua:1: end boom"), "\(atExit)")
        #expect(atExit.stderrShowsNoCrash, "\(atExit)")
        // A finalizer that ends well is no error.
        let fine = try await runScript("""
            local t = setmetatable({}, { __gc = function() end }); t = nil
            collectgarbage()
            """)
        #expect(fine.status == 0 && fine.stderr.isEmpty, "\(fine)")

        let sandbox = try Sandbox()
        try sandbox.write("spec/gc_spec.lua", """
            describe("d", function()
              it("collects", function()
                local t = setmetatable({}, { __gc = function() error("gc in test") end }); t = nil
                collectgarbage() collectgarbage()
              end)
              it("after", function() end)
            end)
            """)
        let test = try await crescent(["test", "spec/gc_spec.lua"], in: sandbox)
        #expect(test.status == 1, "\(test)")
        #expect(test.stdout.contains("error in a __gc finalizer: spec/gc_spec.lua:3: gc in test"), "\(test)")
        #expect(test.stdoutLines.last == "1 passed, 1 failed", "\(test)")
    }

    /// D23: an error in a `{ latest = true }` handler was a bare "error in task", with neither the
    /// subscription nor its place.
    @Test func aLatestHandlersErrorNamesItsSubscription() async throws {
        let result = try await runScript("""
            on("tick", function() sleep(0) error("latest boom") end, { latest = true })
            post("tick")
            """)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("crescent: error in on tick handler (subscribed at script.lua:1): script.lua:1: latest boom"),
                "\(result)")
        #expect(!result.stderr.contains("error in task"), "\(result)")
        let observed = try await runScript("""
            observe(services.location, "updating", function() sleep(0) error("observed boom") end, { latest = true })
            """, options: ["--location", "fixed:1,2"])
        #expect(observed.stderr.contains("error in location.updating handler (subscribed at script.lua:1): script.lua:1: observed boom"),
                "\(observed)")
    }

    /// D29: `on("didFail", f)` warned that the script listens for its own event even when the
    /// script posts `didFail` itself, which is correct code.
    @Test func listeningForAServicesEventNameTheScriptPostsIsNotWarned() async throws {
        let posts = try await runScript("""
            on("didFail", function(p) print("got own didFail", p.why) end)
            post("didFail", { why = "x" })
            """)
        #expect(posts.status == 0, "\(posts)")
        #expect(posts.stdout.contains("got own didFail\tx"), "\(posts)")
        #expect(!posts.stderr.contains("listens for the script's own event"), "\(posts)")
        let listens = try await runScript("""
            on("didFail", function() end)
            """)
        #expect(listens.stderr.contains("crescent: warning: script.lua:1: on(\"didFail\", handler) listens for the script's own event 'didFail'"),
                "\(listens)")
    }

    /// D33: subscriptions to a service never started ended with the run at once, with no hint
    /// that `start()` was missing.
    @Test func subscriptionsToAServiceNeverStartedAreNamedWhenTheRunEnds() async throws {
        let forgot = try await runScript("""
            observe(services.location, "location", function(l) print("loc", l and l.lat) end)
            on("location.didUpdateLocations", function() end)
            """, options: ["--location", "fixed:1,2"])
        #expect(forgot.status == 0, "\(forgot)")
        #expect(forgot.stderr.contains("crescent: warning: script.lua:1: 2 subscriptions to location were live when the run ended, but "
                                       + "location was never started, so no update came: services.location:start() starts it "
                                       + "(a subscription alone keeps nothing running)"), "\(forgot)")
        let started = try await runScript("""
            services.location:start()
            observe(services.location, "location", function(l)
              if l then print("loc", l.lat) services.location:stop() end
            end)
            """, options: ["--location", "fixed:1,2"])
        #expect(started.stdout.contains("loc\t1"), "\(started)")
        #expect(!started.stderr.contains("never started"), "\(started)")
        // A service the script called posts events unstarted (current()'s didFail): not noted.
        let called = try await runScript("""
            on("location.didFail", function() end)
            task(function() print("now", services.location:current().lat) end)
            """, options: ["--location", "fixed:1,2"])
        #expect(called.stdout.contains("now\t1") && !called.stderr.contains("never started"), "\(called)")
    }

    /// D36: `json.encode`'s `sortKeys` took any value, so `sortKeys = "no"` sorted.
    @Test func jsonEncodesSortKeysMustBeABoolean() async throws {
        let result = try await runScript("""
            local ok, err = pcall(function() return json.encode({ b = 1, a = 2 }, { sortKeys = "no" }) end)
            print(ok, err)
            print(json.encode({ a = 1 }, { sortKeys = false }), json.encode({ b = 1, a = 2 }, { sortKeys = true }))
            """)
        #expect(result.stdout.contains("false\tjson.encode: opts.sortKeys must be a boolean (true sorts the keys, "
                                       + "false leaves them unsorted), got string"), "\(result)")
        #expect(result.stdout.contains(#"{"a":1}"# + "\t" + #"{"a":2,"b":1}"#), "\(result)")
    }

    /// D37: `app.route("goods/:", C)` (a parameter with no name) was taken and gave `init` no
    /// argument; a pattern routed twice said nothing, and only the first was ever used.
    @Test func routePatternsAreChecked() async throws {
        let result = try await runScript("""
            local C = controller("C")
            local D = controller("D")
            function D:init(args) print("D", args.id) end
            function D:loadView() return view.text { text = "d" } end
            print(pcall(function() app.route("goods/:", C) end))
            print(pcall(function() app.route("a/:id/:id", C) end))
            app.route("goods/:id", C)
            app.route("goods/:id", D)
            app.open("goods/7")
            timer.after(0, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.stdout.contains("false\tscript.lua:5: bad argument #1 to 'app.route' (the parameter at part 2 of 'goods/:' has no "
                                       + "name, so init(args) would get nothing for it: name it, as in 'goods/:id' for args.id)"), "\(result)")
        #expect(result.stdout.contains("false\tscript.lua:6: bad argument #1 to 'app.route' (the parameter ':id' is in 'a/:id/:id' twice"),
                "\(result)")
        #expect(result.stderr.contains("crescent: warning: script.lua:8: app.route(\"goods/:id\", D) replaces the route of 'goods/:id' to C "
                                       + "made at script.lua:7; app.open of a path it matches now pushes D"), "\(result)")
        #expect(result.stdout.contains("D\t7"), "\(result)")
    }

    /// D30: one command name bound to two methods said nothing; the second replaced the first.
    @Test func aCommandBoundTwiceIsWarned() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:x() end
            function C:y() end
            function C:viewDidLoad()
              self:command("r", "x")
              self:command("r", "y")
              for _ = 1, 2 do self:command("s", "x") end
            end
            app.push(C)
            """, stdinText: "quit\n", options: ["--ui", "plain"])
        #expect(result.stderr.contains("crescent: warning: script.lua:7: self:command(\"r\", \"y\") binds the command 'r' again, replacing "
                                       + "its binding to 'x' made at script.lua:6: bind each command once, or give this one another name"),
                "\(result)")
        // The same line binding it again (a loop, viewWillAppear) is no mistake.
        #expect(!result.stderr.contains("command 's' again"), "\(result)")
    }

    /// D32: a lifecycle step defined with '.' said only "attempt to index a nil value (global 'self')".
    @Test func selfInAFunctionDefinedWithADotNamesTheColon() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C.viewDidLoad() self:key("r", "r") end
            app.push(C)
            """, stdinText: "quit\n", options: ["--ui", "plain"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("script.lua:3: attempt to index a nil value (global 'self'); self is set only in a function "
                                       + "defined with ':' (function C:viewDidLoad(), not C.viewDidLoad) and called with ':' (obj:method())"),
                "\(result)")
    }

    /// D17: `plugin new bar --lau` said "choose one of --lua or --process" and hid the typo.
    @Test func pluginNewNamesAnUnknownOptionBeforeTheKind() async throws {
        let typo = try await crescent(["plugin", "new", "bar", "--lau"])
        #expect(typo.status == 2, "\(typo)")
        #expect(typo.stderr.contains("Unknown option '--lau'. Did you mean '--lua'?"), "\(typo)")
        let none = try await crescent(["plugin", "new", "bar"])
        #expect(none.status == 2 && none.stderr.contains("choose one of --lua or --process"), "\(none)")
    }

    /// D18: `crescent -e '1+1'` and `echo '1+1' | crescent` gave only Lua's syntax error, while
    /// `crescent repl` with piped input says that a value alone is no statement.
    @Test func aValueAloneOnTheCommandLineSaysToPrintIt() async throws {
        let note = "crescent: note: a value alone is no statement in a script: print it (print(1+1)), or run crescent repl for a prompt "
            + "that shows values"
        let chunk = try await crescent(["-e", "1+1"])
        #expect(chunk.status == 1 && chunk.stderr.contains("(command line):1: unexpected symbol near '1'"), "\(chunk)")
        #expect(chunk.stderr.contains(note), "\(chunk)")
        let piped = try await crescent([], stdin: "x = 1\n1+1\n")
        #expect(piped.status == 1 && piped.stderr.contains("stdin:2: "), "\(piped)")
        #expect(piped.stderr.contains(note), "\(piped)")
        // Another syntax error gets no note.
        let other = try await crescent(["-e", "x = = 1"])
        #expect(other.status == 1 && !other.stderr.contains("note:"), "\(other)")
    }

    /// D19: a Mustache partial (`{{> partial}}`) rendered nothing, with no error: a template has
    /// no partials to give.
    @Test func aTemplatePartialIsAnError() async throws {
        let result = try await runScript("""
            print(pcall(function() return view.template { source = "hello\\n  {{> header}} x", data = {} } end))
            print(pcall(function() return view.template { source = "{{#a}}{{/a}}", data = {} } end))
            """)
        #expect(result.stdoutLines.first?.hasPrefix("false\t") == true, "\(result)")
        #expect(result.stdout.contains("view.template: source:2:3: {{> header}} is a partial, which view.template "
                                       + "cannot show (a template has no partials): put the partial's text in the source, or show it as a "
                                       + "view of its own"), "\(result)")
        #expect(result.stdoutLines.last?.hasPrefix("true\t") == true, "\(result)")
    }

    /// D20: a misspelled variable in a template file named the script's line but not the file's,
    /// though a parse error in the file names `file:line:column`.
    @Test func aMisspelledVariableInATemplateFileNamesItsPlaceInTheFile() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("ok.mustache", "title\nhello {{nme}}\n")
        try sandbox.write("script.lua", """
            print(pcall(function() return view.template { file = "ok.mustache", data = { name = "x" } } end))
            """)
        let result = try await crescent(["script.lua"], in: sandbox)
        #expect(result.stdout.contains("view.template: ok.mustache:2:7: {{nme}} names no field of data (fields: name); did you mean 'name'?"),
                "\(result)")
    }

    /// D21: `t:update({ data = { a = 2 } })` on a template, as in its constructor, made the whole
    /// table the data, and the warning told the user to give data an 'a'.
    @Test func aTemplateUpdatedWithADataFieldSaysUpdateTakesTheDataItself() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.template { id = "t", source = "a={{a}}", data = { a = 1 } } end
            function C:viewDidLoad() self.view.t:update({ data = { a = 2 } }) end
            app.push(C)
            """, stdinText: "quit\n", options: ["--ui", "plain"])
        #expect(result.stderr.contains("crescent: warning: script.lua:3: view.template: {{a}} is not in data (fields: data), so it shows "
                                       + "nothing: a template's update takes the data itself, t:update({ a = ... }), not "
                                       + "t:update({ data = { ... } })"), "\(result)")
    }

    /// D25: a traceback whose host frames name no source (a tail call replaced them) folded
    /// them into `(1 host frame: )`, an empty list.
    @Test func foldedHostFramesWithNoSourceListNothing() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/t_spec.lua", "descibe(\"x\", function() it(\"a\", function() end) end)\n")
        let result = try await crescent(["test", "spec/t_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("\tspec/t_spec.lua:1: in main chunk\n"), "\(result)")
        #expect(result.stdout.contains("\t(1 host frame)\n"), "\(result)")
        #expect(!result.stdout.contains(": )"), "\(result)")
    }

    /// D26: a key's name as other programs spell it got no suggestion or a wrong one (`pgdown`:
    /// did you mean 'down'?).
    @Test func keyNamesOfOtherProgramsSuggestOurs() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:r() end
            function C:viewDidLoad()
              for _, k in ipairs({ "pgdown", "return", "escape", "del", "shift-r" }) do
                local _, err = pcall(self.key, self, k, "r")
                print(k, tostring(err):match("did you mean '([^']*)'"))
              end
            end
            app.push(C)
            """, stdinText: "quit\n", options: ["--ui", "plain"])
        for line in ["pgdown\tpagedown", "return\tenter", "escape\tesc", "del\tdelete", "shift-r\tR"] {
            #expect(result.stdoutLines.contains(line), "\(line): \(result)")
        }
    }

    /// D28, the small ones: each named the mistake without the near name or the fix.
    @Test func smallMistakesNameTheNearNameOrTheFix() async throws {
        // `plugins allow fo`: no did-you-mean.
        let sandbox = try HardeningNamedMistakesTests.greetPlugin()
        let allow = try await crescent(["plugins", "allow", "gret"], in: sandbox)
        #expect(allow.status != 0 && allow.stderr.contains("no plugin 'gret' found; did you mean 'greet'?"), "\(allow)")
        // `timer.cron("0 9 * * monday")`: the whole day's name, where cron takes three letters.
        let cron = try await runScript("""
            print(pcall(timer.cron, "0 9 * * monday", function() end))
            print(pcall(timer.cron, "0 9 1 january *", function() end))
            """)
        #expect(cron.stdout.contains("'monday' is not a number in 0-7 or a name (sun-sat); did you mean 'mon'?"), "\(cron)")
        #expect(cron.stdout.contains("did you mean 'jan'?"), "\(cron)")
        // `view.stack(a, b)`: the example showed an id, not the children a stack holds.
        let stack = try await runScript("""
            print(pcall(function() return view.stack(view.text { text = "a" }, view.text { text = "b" }) end))
            """)
        #expect(stack.stdout.contains("view.stack: pass a table of fields, e.g. view.stack { view.text { text = \"a\" }, "
                                      + "view.text { text = \"b\" } }"), "\(stack)")
        // `--plugin nope`: the manifest's path, not the missing folder, was named.
        let plugin = try await crescent(["--plugin", "nope", "-e", "print(1)"], in: sandbox)
        #expect(plugin.stderr.contains("nope: no such folder (a plugin is a folder that holds a plugin.toml)"), "\(plugin)")
        // `crescent init --help` said its default twice.
        let help = try await crescent(["init", "--help"])
        #expect(help.stdout.components(separatedBy: "default").count == 2, "\(help)")
        // `--tags '#fast'`: the tag as a name writes it, where the option takes the word.
        try sandbox.write("spec/t_spec.lua", """
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            describe("d", function()
              it("a #fast", function() end)
              it("rr", function() app.push(C) press("rr") end)
              it("none", function() app.push(C) press() end)
            end)
            """)
        let tags = try await crescent(["test", "--tags", "#fast", "spec/t_spec.lua"], in: sandbox)
        #expect(tags.status == 1, "\(tags)")
        #expect((tags.stdout + tags.stderr).contains("give a tag without its #, as in --tags fast (the name writes it #fast)"), "\(tags)")
        // `press("rr")` and `press()` in a spec named app.press, which the spec did not call.
        let press = try await crescent(["test", "spec/t_spec.lua"], in: sandbox)
        #expect(press.stdout.contains("spec/t_spec.lua:5: bad argument #1 to 'press' (unknown key"), "\(press)")
        #expect(press.stdout.contains("spec/t_spec.lua:6: bad argument #1 to 'press' (a key name expected"), "\(press)")
        #expect(!press.stdout.contains("'app.press'"), "\(press)")
    }

    /// D16: `crescent observe h1 location` (the key left out) took the host's name for the service.
    /// D24: the remote `key` method's error showed the host's frames unfolded in `data.traceback`.
    @Test func remoteMistakesNameTheHostAndFoldTheHostsFrames() async throws {
        let host = try await ListeningHost(script: RemoteControlTests.groceries, name: "h1", options: ["--data-dir", "data"])
        let missing = try await host.crescentCommand(["observe", "h1", "location"])
        #expect(missing.status == 2, "\(missing)")
        #expect(missing.stderr.contains("observe: 'h1' is the name of a listening host; give the service and the property after it: "
                                        + "crescent observe h1 location KEY"), "\(missing)")
        let client = try host.client()
        let error = client.call("key", ["keys": ["pgdown"]])?["error"] as? [String: Any]
        #expect((error?["message"] as? String)?.contains("did you mean 'pagedown'?") == true, "\(String(describing: error))")
        let traceback = (error?["data"] as? [String: Any])?["traceback"] as? String ?? ""
        #expect(traceback.contains("host frame") && !traceback.contains(#/\[crescent controllers\w*\]:/#), "\(traceback)")
        let ended = await host.stop()
        #expect(ended.status == 143, "\(ended)")
    }
}
