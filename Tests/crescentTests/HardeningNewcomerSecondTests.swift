import Foundation
import Testing

/// The second newcomer probe of issue 39: the misleading and silent findings.
@Suite struct HardeningNewcomerSecondTests {
    /// M3, M6, S1, S2: `self.command(...)` with a dot blamed a method that exists;
    /// `self.view:update{}` was "no component with id 'update'"; a loadView without `return`
    /// showed nothing; a misspelled option of `command`, a misspelled `didSelect` and a string
    /// where `app.push` takes its args went unsaid.
    @Test func controllerMistakesAreNamed() async throws {
        let result = try await runScript("""
            local T = controller("T")
            function T:loadView()
              view.text { id = "t", text = "a" }
            end
            local U = controller("U")
            function U:loadView() return view.text { id = "t", text = "u" } end
            function U:didselect() end
            function U:x() end
            function U:viewDidLoad()
              print(select(2, pcall(function() self.command("x", "x", "x") end)))
              print(select(2, pcall(function() self:command("x", "x", "x", { arg = { "item: string" } }) end)))
              print(select(2, pcall(function() self.view:update { text = "b" } end)))
              print(select(2, pcall(function() self.key("a", "x") end)))
              print(select(2, pcall(function() app.push(T, "args") end)))
              app.push(T)
            end
            app.push(U)
            """, stdinText: "")
        #expect(result.stdoutLines.prefix(5) == [
            "script.lua:10: self:command(name, method[, help][, options]): call it with ':' on the controller (self:command(...)), got string as self",
            "script.lua:11: bad argument #4 to 'command' (unknown option 'arg' (options: args, complete); did you mean 'args'?)",
            "script.lua:12: self.view holds the view's components by id, so self.view:update(...) calls no component: write "
                + "self.view.<id>:update(...) (ids: t), or self.view.root:update(...)",
            "script.lua:13: self:key(key, method[, help]): call it with ':' on the controller (self:key(...)), got string as self",
            "script.lua:14: app.push: args must be a table (init(args) receives it), got string; e.g. app.push(T, { item = item })",
        ], "\(result)")
        #expect(result.stderr.contains("crescent: warning: script.lua:7: U:didselect is not called by a selectable list or table; did you mean 'didSelect'?"),
                "\(result)")
        #expect(result.stderr.contains("crescent: warning: script.lua:2: T:loadView returned nothing, so T shows no view: return it "
                                       + "(return view.text { ... })"), "\(result)")
    }

    /// M1: `help("view")` documented fields the components refuse (`data`, `keys`, `empty`).
    @Test func theViewsHelpListsTheFieldsTheComponentsTake() async throws {
        let result = try await runScript("help('view')")
        #expect(result.status == 0, "\(result)")
        for line in ["view.list { id, items, marker, selectable }", "view.table { id, columns, rows, header, selectable }",
                     "view.keyvalue { id, pairs }", "view.template { id, source, data, file }", "view.stack { id, gap, child, ... }"] {
            #expect(result.stdout.contains(line), "\(line): \(result)")
        }
        #expect(!result.stdout.contains("empty"), "\(result)")
    }

    /// M4: `latitude` on a location suggested `altitude`; `lng` suggested nothing.
    @Test func theUsualWordsForLatitudeAndLongitudeSuggestLatAndLon() async throws {
        let result = try await runScript("""
            task(function()
              local l = services.location:current()
              print(select(2, pcall(function() return l.latitude end)))
              print(select(2, pcall(function() return l.lng end)))
            end)
            """, options: ["--location", "fixed:1,2"])
        #expect(result.stdoutLines.count == 2, "\(result)")
        #expect(result.stdoutLines.first?.hasSuffix("; did you mean 'lat'?)") == true, "\(result)")
        #expect(result.stdoutLines.last?.hasSuffix("; did you mean 'lon'?)") == true, "\(result)")
    }

    /// S3: `on("")` and `on("locaton.didUpdateLocations")` subscribed to what never fires.
    @Test func anEmptyEventNameIsRefusedAndAServiceNameMisspelledIsWarned() async throws {
        let result = try await runScript("""
            print(select(2, pcall(on, "", print)))
            on("locaton.didUpdateLocations", print)
            on("groceries.saved", print)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.first?.contains("bad argument #1 to 'on' (the name is empty: give a service's event") == true, "\(result)")
        #expect(result.stderr.contains("crescent: warning: script.lua:2: on(\"locaton.didUpdateLocations\", handler) listens for the script's own "
                                       + "event 'locaton.didUpdateLocations': no service is named 'locaton'; did you mean 'location' "
                                       + "(on(\"location.didUpdateLocations\", handler))?"), "\(result)")
        #expect(!result.stderr.contains("groceries"), "\(result)")
    }

    /// S7 and M7: `[host] listen = "yes"` listened as a host named `yes`; a key before any
    /// section was called a section.
    @Test func aQuotedYesForListenAndAKeyBeforeAnySectionAreNamed() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", "print('ran')\n")
        try sandbox.write("crescent.toml", "[host]\nlisten = \"yes\"\n")
        let quoted = try await crescent(["script.lua"], in: sandbox)
        #expect(quoted.status == 2, "\(quoted)")
        #expect(quoted.stderr.contains("crescent.toml:2: [host] listen = \"yes\" would listen as a host named 'yes': write listen = true "
                                       + "(no quotes), or a name such as listen = \"groceries\""), "\(quoted)")
        try sandbox.write("crescent.toml", "# where the fixes come from\nprovider = \"fixed:1,2\"\n")
        let topLevel = try await crescent(["script.lua"], in: sandbox)
        #expect(topLevel.status == 0, "\(topLevel)")
        #expect(topLevel.stderr.contains("crescent.toml:2: key 'provider' comes before any [section], so no setting reads it; put it under [location]"),
                "\(topLevel)")
        #expect(!topLevel.stderr.contains("unknown section"), "\(topLevel)")
    }

    /// M9: extra words to `crescent observe` were told to give what was given (the first three
    /// are NAME SERVICE KEY).
    @Test func extraWordsToObserveAreNamed() async throws {
        let result = try await crescent(["observe", "location", "location", "extra", "words"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("too many words: crescent observe [NAME] SERVICE KEY takes at most three, and 'words' is more"),
                "\(result)")
    }
    /// P1: a misspelled global (`servies`, `Controller`) ended in Lua's bare "attempt to index
    /// a nil value (global 'servies')"; reading a global that is not set still gives nil.
    @Test func aMisspelledGlobalSuggestsTheGlobal() async throws {
        let indexed = try await runScript("print(undefinedName)\nservies.location:start()")
        #expect(indexed.stdoutLines == ["nil"], "\(indexed)")
        #expect(indexed.stderr.contains("script.lua:2: attempt to index a nil value (global 'servies'); did you mean 'services'?"), "\(indexed)")
        let called = try await runScript("local T = Controller('T')")
        #expect(called.stderr.contains("script.lua:1: attempt to call a nil value (global 'Controller'); did you mean 'controller'?"), "\(called)")
    }

    /// S4: `post("location.didFail", ...)` reached `on("location.didFail")` but not
    /// `services.location:on("didFail")`; a script's own dotted name still posts.
    @Test func postingAServicesEventIsRefused() async throws {
        let result = try await runScript("""
            print(select(2, pcall(post, "location.didFail", { code = "fake" })))
            on("my.event", function(payload) print("got", payload) end)
            post("my.event", 7)
            """)
        #expect(result.stdoutLines == [
            "bad argument #1 to 'post' ('location.didFail' is an event of the location service, which only the service posts; post a name "
                + "of the script's own (\"refreshed\"), or fake the service in a spec (fake.service))",
            "got\t7",
        ], "\(result)")
    }

    /// M5: `crescent send groceris add milk` and `send --keys down` were sent to the host as
    /// commands named 'groceris' and '--keys'.
    @Test func sendNamesAMisspelledHostOrOption() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("groceries.lua", """
            local G = controller("Groceries")
            function G:loadView() return view.text { text = "list" } end
            function G:viewDidLoad() self:command("add", "add", "add an item") end
            function G:add(item) print("added", item) end
            app.push(G)
            """)
        let host = try await ListeningHost(script: "groceries.lua", name: "groceries", options: ["--keep-running"], sandbox: sandbox)
        let misspelled = try await host.crescentCommand(["send", "groceris", "add", "milk"])
        #expect(misspelled.status == 1, "\(misspelled)")
        #expect(misspelled.stderr.contains("send: no host named 'groceris'; did you mean 'crescent send groceries add milk'?"), "\(misspelled)")
        let option = try await host.crescentCommand(["send", "--keys", "down"])
        #expect(option.status == 2, "\(option)")
        #expect(option.stderr.contains("send: unknown option '--keys'; did you mean '--key'?"), "\(option)")
        let sent = try await host.crescentCommand(["send", "groceries", "add", "milk"])
        #expect(sent.status == 0, "\(sent)")
        _ = await host.stop()
    }
    /// S1 and S7: `self.view.t = view.text {...}` was ignored; `greet Ada Lovelace` to a command
    /// without declared args ran greet("Ada"), dropping `Lovelace` without a word.
    @Test func replacingAComponentAndAWordTooManyAreNamed() async throws {
        let result = try await runScript("""
            local T = controller("T")
            function T:loadView() return view.text { id = "t", text = "a" } end
            function T:viewDidLoad()
              print(select(2, pcall(function() self.view.t = view.text { text = "b" } end)))
              self:command("greet", "greet", "greet someone")
            end
            function T:greet(name) print("Hello, " .. name .. "!") end
            app.push(T)
            """, stdinText: "greet Ada Lovelace\ngreet Ada\n")
        #expect(result.stdoutLines.contains("script.lua:4: self.view.t = ... does not replace a component: update it "
                                            + "(self.view.t:update { ... }) or set its fields (self.view.t.text = ...)"), "\(result)")
        #expect(result.stderr.contains("command 'greet': T:greet takes 1 argument (name), got 2 (quote an argument with spaces: \"Ada Lovelace\")"),
                "\(result)")
        #expect(result.stdoutLines.filter { $0.hasPrefix("Hello") } == ["Hello, Ada!"], "\(result)")
    }

    /// M8: the stubs' closed `crescent.response` had no `json`, so LuaLS flagged the README's
    /// own `r:json()`.
    @Test func theStubsTypeAResponsesJsonMethod() async throws {
        let sandbox = try Sandbox()
        let result = try await crescent(["stubs", "--out", "types"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        let globals = try String(contentsOfFile: sandbox.path + "/types/globals.lua", encoding: .utf8)
        #expect(globals.contains("---@field json fun(self: crescent.response, opts?: table): any"), "\(globals.prefix(400))")
    }
    /// M2: `"name: strng"` in a plugin's declaration was taken as a table named strng, so a
    /// string argument was refused as "not a strng"; `"interger"` blamed the initial value.
    @Test func aMisspelledTypeInAPluginsDeclarationIsNamed() async throws {
        let sandbox = try luaPluginSandbox("greeter", main: """
            local greeter = service("greeter", "Greets.")
            greeter:method("bye", { "name: strng" }, "string", "Says bye.", function(name) return "bye " .. name end)
            """)
        let method = try await crescent(["-e", "print(services.greeter)"], in: sandbox)
        #expect(method.stderr.contains("'strng' is not a type (types: string, number, integer, boolean, table, location, {T}, value; "
                                       + "another word names a table); did you mean 'string'?"), "\(method)")
        try sandbox.write("plugins/greeter/main.lua", """
            local greeter = service("greeter", "Greets.")
            greeter:property("level", "interger", "How loud.", 0)
            greeter:method("names", { "names: {strings}" }, "string", "Many.", function(names) return "ok" end)
            """)
        let property = try await crescent(["-e", "print(services.greeter)"], in: sandbox)
        #expect(property.stderr.contains("property 'level': 'interger' is not a type"), "\(property)")
        #expect(property.stderr.contains("did you mean 'integer'?"), "\(property)")
    }

    /// S6 and P7: a fake's `status = "200"` answered 200 whatever the test meant; a spec run as a
    /// script failed on Lua's bare "attempt to call a nil value (global 'describe')"; `q` typed on
    /// the command line got no hint.
    @Test func aFakesStringStatusASpecRunAsAScriptAndQAreNamed() async throws {
        let (result, sandbox) = try await TestCommandTests.run(["h_spec.lua": """
            it("answers", function() fake.http { ["GET http://a.test/"] = { status = "404" } } end)
            """])
        #expect(result.stdout.contains("spec/h_spec.lua:1: fake.http: route GET http://a.test/: status must be an integer 100-999 (an HTTP status such as 200 or 404), got \"404\""),
                "\(result)")
        let asScript = try await crescent(["spec/h_spec.lua"], in: sandbox)
        #expect(asScript.stderr.contains("attempt to call a nil value (global 'it'); it is defined in specs: run the file with crescent test FILE"),
                "\(asScript)")
        let quit = try await runScript("""
            local T = controller("T")
            function T:loadView() return view.text { text = "x" } end
            app.push(T)
            """, stdinText: "q\n")
        #expect(quit.stderr.contains("unknown command 'q'; commands of T: help, quit; did you mean 'quit'?"), "\(quit)")
    }

    /// P0: the tracker (the README's quick start) showed gpsd's failure in one view.text line,
    /// cut at the width before its advice (--location fixed:LAT,LON); it is wrapped now.
    @Test func theTrackerShowsTheLocationAdviceWhole() async throws {
        let sandbox = try Sandbox()
        let tracker = CrescentProcess(["--keep-running", "--timeout", "20", "--ui", "plain", "--location", "gpsd:127.0.0.1:1",
                                       "\(ControllerScriptTests.scripts)/tracker.lua"], directory: sandbox.path)
        try tracker.start()
        #expect(await tracker.waitForOutput("--location fixed:LAT,LON", within: 15), "\(tracker.stdout)\n\(tracker.stderr)")
        #expect(tracker.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(tracker.stdout)")
        tracker.send(SIGTERM, expecting: .handled)
        _ = await tracker.finish()
    }
}
