import Foundation
import Testing

/// What the third attack on issue 39 (new24) found: messages that named the host's own line or
/// the wrong culprit, a warning on UIKit's own name, and mistakes that passed without a word.
/// Each test is one finding (its number in the report), run through the `crescent` binary.
@Suite struct HardeningNamedMistakesThirdTests {
    /// A spec writing a controller app, for the spec tests below.
    private static func appSandbox(spec: String) throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("app.lua", """
            local V = controller("V")
            function V:loadView() return view.text { id = "t", text = "hi" } end
            function V:viewDidLoad() self:key("r", "added") end
            function V:added() print("added r") end
            app.push(V)
            """)
        try sandbox.write("spec/x_spec.lua", spec)
        return sandbox
    }

    /// #1: a bad screen size in `screen_text` and `assert.view` named `[crescent testing]:454:`
    /// instead of the spec's line.
    @Test func aBadScreenSizeNamesTheSpecsLine() async throws {
        let sandbox = try Self.appSandbox(spec: """
            describe("d", function()
              it("text", function() script("app.lua"); screen_text(0, 0) end)
              it("view", function() script("app.lua"); assert.view("g.txt", { width = 0, height = 0 }) end)
            end)
            """)
        let result = try await crescent(["test", "spec/x_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:2: screen_text(width, height): a screen of 0 x 0 cannot be shown; "
                                       + "pass 1-1000 columns and 2-1000 rows"), "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:3: assert.view(golden, screen): a screen of 0 x 0 cannot be shown"), "\(result)")
        #expect(!result.stdout.contains("[crescent testing]"), "\(result)")
    }

    /// #16: the spec's own `press("q")` (the default quit key) was blamed on the code under
    /// test as "called app.exit(0)". #6: `press` with no controller shown passed.
    @Test func theSpecsOwnPressIsNamedForWhatItDid() async throws {
        let sandbox = try Self.appSandbox(spec: """
            describe("d", function()
              it("quit", function() script("app.lua"); press("r", "q") end)
              it("none", function() press("down") end)
            end)
            """)
        let result = try await crescent(["test", "spec/x_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("the test's press(\"q\") at spec/x_spec.lua:2 quit the app (q quits where the controller binds no 'q')"),
                "\(result)")
        #expect(!result.stdout.contains("the code under test called app.exit(0)"), "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:3: press: no controller is shown to receive the keys"), "\(result)")
        #expect(result.stdoutLines.last == "0 passed, 2 failed", "\(result)")
    }

    /// #3: `{{usr.name}}` with `user` in data only warned, and told to give data a 'name'.
    @Test func aMisspelledFirstSegmentOfATemplateVariableNamesTheClosest() async throws {
        func shown(_ source: String) async throws -> RunResult {
            try await runScript("""
                local V = controller("V")
                function V:loadView()
                  return view.template { id = "t", source = "\(source)", data = { user = { name = "a" } } }
                end
                app.push(V)
                """, stdinText: "quit\n", options: ["--ui", "plain"])
        }
        let result = try await shown("{{usr.name}}")
        #expect(result.stderr.contains("script.lua:3: view.template: {{usr.name}} names no field of data (fields: user); did you mean 'user'?"),
                "\(result)")
        #expect(!result.stderr.contains("give data a 'name'"), "\(result)")
        // With no close field the warning names the step that is missing, not the last one.
        let far = try await shown("{{zzzz.name}}")
        #expect(far.stderr.contains("{{zzzz.name}} is not in data (fields: user), so it shows nothing; give data a 'zzzz'"), "\(far)")
    }

    /// #20: `viewDidUnload` (UIKit's own name, a word put inside the step) was warned as a
    /// misspelled `viewDidLoad`; `loadViews` still is.
    @Test func aWordInsideALifecycleStepIsAHelperOfItsOwn() async throws {
        let result = try await runScript("""
            local V = controller("V")
            function V:loadView() return view.text { id = "t", text = "x" } end
            function V:viewDidUnload() end
            function V:viewWillLayoutSubviews() end
            function V:loadViews() end
            app.push(V)
            """, stdinText: "quit\n", options: ["--ui", "plain"])
        #expect(!result.stderr.contains("viewDidUnload"), "\(result)")
        #expect(result.stderr.contains("V:loadViews is not a lifecycle step, so it is never called as one; did you mean 'loadView'?"), "\(result)")
    }

    /// #22: a fake's `h:emit()` and `h:set()` named the user's first argument `#2`. #17:
    /// `self:command("add")` and `self:key("r")` gave no signature.
    @Test func aMissingNameToAColonCallIsArgumentOneWithItsSignature() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/x_spec.lua", """
            describe("d", function()
              it("emit", function() local h = fake.service("location", {}); h:emit() end)
              it("set", function() local h = fake.service("location", {}); h:set(nil, 1) end)
            end)
            """)
        let result = try await crescent(["test", "spec/x_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:2: fake:emit(event[, payload]): argument #1 must be an event name of location, got nil"),
                "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:3: fake:set(property, value): argument #1 must be a property name of location, got nil"),
                "\(result)")
        let helpers = try await runScript("""
            local V = controller("V")
            function V:loadView() return view.text { id = "t", text = "x" } end
            function V:viewDidLoad()
              print(select(2, pcall(self.command, self, "add")))
              print(select(2, pcall(self.key, self, "r")))
            end
            app.push(V)
            """, stdinText: "quit\n", options: ["--ui", "plain"])
        #expect(helpers.stdout.contains("self:command(name, method[, help][, options]): argument #2 must be the name of a method of V "
                                        + "that runs the command, got nil (as self:command(\"add\", \"add\"))"), "\(helpers)")
        #expect(helpers.stdout.contains("self:key(key, method[, help]): argument #2 must be the name of a method of V that the key runs, got nil"),
                "\(helpers)")
    }

    /// #26: `self.view.stack1 = nil` with no component `stack1` told to update `self.view.stack1`,
    /// a component that does not exist, and listed no ids.
    @Test func assigningAnUnknownViewIdListsTheIds() async throws {
        let result = try await runScript("""
            local V = controller("V")
            function V:loadView() return view.stack { view.text { id = "title", text = "x" } } end
            function V:viewDidLoad()
              print(select(2, pcall(function() self.view.titel = nil end)))
              print(select(2, pcall(function() self.view.title = nil end)))
            end
            app.push(V)
            """, stdinText: "quit\n", options: ["--ui", "plain"])
        #expect(result.stdout.contains("script.lua:4: self.view.titel = ... sets nothing: self.view holds the view's components by id, "
                                       + "and V's view has no component with id 'titel' (ids: title; did you mean 'title'?)"), "\(result)")
        #expect(result.stdout.contains("script.lua:5: self.view.title = ... does not replace a component: update it"), "\(result)")
    }

    /// #23: `post("", payload)` was accepted, though `on("", f)` is refused. #11: `help(obsrve)`,
    /// a misspelled global, printed the overview with no word that it was given nil.
    @Test func anEmptyPostAndHelpOfNilAreNamed() async throws {
        let post = try await runScript("post(\"\", {})\n")
        #expect(post.status != 0, "\(post)")
        #expect(post.stderr.contains("script.lua:1: bad argument #1 to 'post' (the name is empty, so no subscription can hear it"), "\(post)")
        let help = try await runScript("help(obsrve)\n")
        #expect(help.status == 0, "\(help)")
        #expect(help.stdout.contains("help(x): the value given is nil, so there is nothing to document"), "\(help)")
        let overview = try await runScript("help()\n")
        #expect(!overview.stdout.contains("the value given is nil"), "\(overview)")
    }

    /// #27: a key bound twice by one controller replaced the first binding without a word; #28:
    /// two controller classes of one name said nothing. Both warn, naming both places.
    @Test func aKeyBoundTwiceAndAClassNameMadeTwiceAreWarned() async throws {
        let result = try await runScript("""
            local V = controller("V")
            function V:loadView() return view.text { id = "t", text = "x" } end
            function V:viewWillAppear() self:key("a", "add") end
            function V:viewDidLoad()
              self:key("r", "add", "h")
              self:key("r", "add", "again")
            end
            function V:add() end
            local W = controller("V")
            app.push(V)
            """, stdinText: "quit\n", options: ["--ui", "plain"])
        #expect(result.stderr.contains("warning: script.lua:6: self:key(\"r\", \"add\") binds 'r' again, replacing its binding to 'add' "
                                       + "made at script.lua:5: bind each key once, or another key"), "\(result)")
        #expect(result.stderr.contains("warning: script.lua:9: controller(\"V\") makes a second class named V (the first at script.lua:1)"),
                "\(result)")
        // The same binding made again by the same line (each appearance) is no mistake.
        #expect(!result.stderr.contains("binds 'a' again"), "\(result)")
    }

    /// #14: a misspelled method of a `fake.location` handle was Lua's bare "attempt to call a
    /// nil value (method 'fial')".
    @Test func aMisspelledFakeLocationMethodNamesTheClosest() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/x_spec.lua", """
            describe("d", function() it("t", function()
              local h = fake.location { fixes = { { lat = 1, lon = 2 } } }
              h:fial("timeout")
            end) end)
            """)
        let result = try await crescent(["test", "spec/x_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/x_spec.lua:3: the fake.location handle has no method 'fial' (methods: fail; did you mean 'fail'?)"),
                "\(result)")
    }

    /// #10: `--location fixed:1` printed an error, ran the script and exited 0; #30:
    /// `--no-plugins --plugin DIR` dropped the folder without a note; #25: `crescent view
    /// --width 0` was a JSON-RPC "invalid params" with exit 1. Each is a usage error (exit 2).
    @Test func contradictoryOrOutOfRangeOptionsAreUsageErrors() async throws {
        let cases: [(arguments: [String], expected: String)] = [
            (["--location", "fixed:1", "-e", "print('ran')"], "--location fixed:1: expected fixed:LAT,LON[,ALT] in degrees (and metres)"),
            (["--no-plugins", "--plugin", "pl/p1", "-e", "print('ran')"],
             "--no-plugins keeps only the builtin services, so --plugin pl/p1 would not load: give one of the two"),
            (["view", "x", "--width", "0"], "--width must be a number of columns in 1...10000, got 0"),
        ]
        for (arguments, expected) in cases {
            let result = try await crescent(arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderr.contains(expected), "\(arguments): \(result)")
            #expect(!result.stdout.contains("ran"), "\(arguments): \(result)")
        }
        let good = try await crescent(["--location", "fixed:1,2", "-e", "print('ran')"])
        #expect(good.status == 0 && good.stdout.contains("ran"), "\(good)")
    }

    /// #9: `app.send("ad")` warned without the script's line; #24: `add oat milk` for
    /// `{ "item: string", "qty: integer?" }` gave no hint to quote.
    @Test func aSentCommandsMistakeNamesItsLineAndTheQuote() async throws {
        let result = try await runScript("""
            local V = controller("V")
            function V:loadView() return view.text { id = "t", text = "x" } end
            function V:viewDidLoad() self:command("add", "add", "add an item", { args = { "item: string", "qty: integer?" } }) end
            function V:viewDidAppear() app.send("ad") end
            function V:add() end
            app.push(V)
            """, stdinText: "add oat milk\nquit\n", options: ["--ui", "plain"])
        // Since new25's D4 an error the script sees (HardeningNamedMistakesFourthAttackTests), still at its line.
        #expect(result.stderr.contains("script.lua:4: app.send: unknown command 'ad'; commands of V: add, help, quit; did you mean 'add'?"),
                "\(result)")
        #expect(result.stderr.contains("command 'add': argument #2 'qty' must be an integer, got 'milk' (if 'oat milk' is one item, "
                                       + "quote it: add \"oat milk\")"), "\(result)")
    }

    /// #19: a misspelled zone (`Europe/Pari`, `utc`) listed generic examples, not the zone meant.
    @Test func aMisspelledZoneNamesTheClosest() async throws {
        let result = try await runScript("""
            for _, zone in ipairs({ "Europe/Pari", "utc", "Mars/Base" }) do
              print((select(2, pcall(function() timer.at("09:30", { zone = zone }, function() end) end))))
            end
            """)
        #expect(result.stdoutLines == [
            "script.lua:2: bad argument #2 to 'timer.at' (zone 'Europe/Pari' is not an IANA time zone: did you mean \"Europe/Paris\"?)",
            "script.lua:2: bad argument #2 to 'timer.at' (zone 'utc' is not an IANA time zone: did you mean \"UTC\"?)",
            "script.lua:2: bad argument #2 to 'timer.at' (zone 'Mars/Base' is not an IANA time zone: use a name such as \"Europe/Paris\", "
                + "\"America/New_York\" or \"UTC\")",
        ], "\(result)")
    }

    /// #31: a `fake.http` route function reading a misspelled request field (`req.bdy`) got nil;
    /// a GET's absent body still reads nil.
    @Test func aMisspelledRequestFieldInAFakeRouteNamesTheFields() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/x_spec.lua", """
            describe("d", function()
              it("typo", function()
                fake.http { ["GET http://x/"] = function(req) return { status = 200, body = req.bdy } end }
                services.http:get("http://x/")
              end)
              it("absent body", function()
                fake.http { ["GET http://x/"] = function(req) return { status = 200, body = tostring(req.body) .. " " .. req.method } end }
                assert.equals("nil GET", services.http:get("http://x/").body)
              end)
            end)
            """)
        let result = try await crescent(["test", "spec/x_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("fake.http: the request has no field 'bdy' (fields: body, headers, method, url; did you mean 'body'?)"),
                "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 1 failed", "\(result)")
    }

    /// #5: `[plugins] disabled = ["gret"]` with a plugin `greet` said nothing, and greet loaded.
    @Test func aDisabledNameOfNoPluginIsWarnedWithTheClosest() async throws {
        let sandbox = try HardeningNamedMistakesTests.greetPlugin()
        try sandbox.write("crescent.toml", "[plugins]\ndisabled = [\"gret\"]\n")
        let result = try await crescent(["-e", "print('ran')"], in: sandbox)
        #expect(result.status == 0 && result.stdout.contains("ran"), "\(result)")
        #expect(result.stderr.contains("warning: crescent.toml:2: [plugins] disabled names no plugin 'gret', so it turns nothing off (plugins: "),
                "\(result)")
        #expect(result.stderr.contains("did you mean 'greet'?)"), "\(result)")
        try sandbox.write("crescent.toml", "[plugins]\ndisabled = [\"greet\"]\n")
        let right = try await crescent(["-e", "print('ran')"], in: sandbox)
        #expect(!right.stderr.contains("disabled names no plugin"), "\(right)")
    }

    /// #12: a Lua plugin's `svc:emit` with a payload field it does not declare was warned
    /// without the plugin's line, which its other mistakes name.
    @Test func aPluginsDroppedEmitNamesItsLine() async throws {
        let sandbox = try HardeningNamedMistakesTests.greetPlugin(main: """
            local s = service("greet", "says hi")
            s:event("didHi", "{ name }", "someone said hi")
            s:method("hi", {}, "string", "says hi", function()
              s:emit("didHi", { nme = "ada" })
              return "hi"
            end)
            """)
        let result = try await crescent(["-e", "task(function() print(services.greet:hi()) end)"], in: sandbox)
        #expect(result.status == 0 && result.stdout.contains("hi"), "\(result)")
        #expect(result.stderr.contains("plugin 'greet': plugins/greet/main.lua:4: emitted 'greet.didHi' with field 'nme'"), "\(result)")
    }

    /// #7: an error in a handler given to `self:observe` said "subscribed at ?"; the global
    /// `observe` names the script's line.
    @Test func aControllersObserveHandlerErrorNamesWhereItSubscribed() async throws {
        let result = try await runScript("""
            local V = controller("V")
            function V:loadView() return view.text { id = "t", text = "x" } end
            function V:viewDidAppear()
              self:observe(services.location, "location", function() error("boom") end)
            end
            app.push(V)
            """, options: ["--ui", "plain", "--location", "fixed:1,2", "--timeout", "2"])
        // Standard input is /dev/null, not an empty pipe: the end of piped commands would end the
        // run before the first fix reached the handler (it passed or failed by timing).
        #expect(result.stderr.contains("error in location.location handler (subscribed at script.lua:4): script.lua:4: boom"), "\(result)")
        #expect(!result.stderr.contains("subscribed at ?"), "\(result)")
    }
}

