import Foundation
import Testing

/// Issue 39's last findings of the fourth attack (new25): D8's handler tables and `apply`, D11's
/// extra arguments, D32's `.` for `:`, and D28's small ones. Each test is one finding, run
/// through the `crescent` binary.
@Suite struct HardeningNamedMistakesSixthTests {
    /// D8: a `didChange` change set and an `on` handler's `info` read a misspelled field as nil.
    @Test func aMisspelledFieldOfAChangeSetOrAnEventsInfoIsNamed() async throws {
        let result = try await runScript("""
            local c = services.store:collection("x")
            c:on("didChange", function(cs)
              print("cs", #cs.inserted, cs.items, pcall(function() return cs.insertd end))
            end)
            on("my.ev", function(payload, info)
              print("info", info.name, info.object, pcall(function() return info.nam end))
            end)
            post("my.ev", {})
            c:add({ a = 1 }, function() end)
            """, options: ["--data-dir", ":memory:"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("cs\t1\tnil\tfalse\tscript.lua:3: no field 'insertd' on change set (fields: deleted, inserted, insertedItems, "
                                       + "items, reload, updated, updatedItems; did you mean 'inserted'?)"), "\(result)")
        #expect(result.stdout.contains("info\tmy.ev\tnil\tfalse\tscript.lua:6: no field 'nam' on event info (fields: event, name, object, sub; "
                                       + "did you mean 'name'?)"), "\(result)")
    }

    /// D8: `tbl:apply { insertd = … }` and `list:apply { deleted = …, delted = … }` left the
    /// unknown field out without a word.
    @Test func applyNamesAFieldNoChangeSetHas() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView()
              return view.stack { view.table { id = "t", columns = { "a" }, rows = { { "x" } } }, view.list { id = "l", items = { "a", "b" } } }
            end
            function C:viewDidLoad()
              print(pcall(function() self.view.t:apply({ insertd = { 1 } }) end))
              print(pcall(function() self.view.l:apply({ deleted = { 1 }, delted = { 1 } }) end))
              print(#self.view.l.items)
              app.exit(0)
            end
            app.push(C)
            """, options: ["--ui", "plain"])
        #expect(result.stdoutLines.count >= 3, "\(result)")
        #expect(result.stdoutLines.first?.hasPrefix("false\tscript.lua:6: ") == true, "\(result)")
        #expect(result.stdoutLines.first?.hasSuffix("a change set has no field 'insertd' (fields: deleted, inserted, insertedItems, items, reload, "
                                                    + "updated, updatedItems; did you mean 'inserted'?)") == true, "\(result)")
        #expect(result.stdoutLines.dropFirst().first?.hasSuffix("a change set has no field 'delted' (fields: deleted, inserted, insertedItems, "
                                                                + "items, reload, updated, updatedItems; did you mean 'deleted'?)") == true, "\(result)")
        // Refused whole: the deletion it also held was not made.
        #expect(result.stdoutLines.dropFirst(2).first == "2", "\(result)")
    }

    /// D11: the globals and helpers took an extra argument without a word (`timer.after(1, f,
    /// "x")` does not pass "x" to f), and `app.open`'s args were not checked.
    @Test func anExtraArgumentIsOneTooMany() async throws {
        let result = try await runScript("""
            local function try(f) print((select(2, pcall(f)))) end
            try(function() timer.after(0.01, function() end, "extra") end)
            try(function() timer.every(1, function() end, "extra") end)
            try(function() timer.at("09:30", function() end, "extra") end)
            try(function() timer.cron("* * * * *", { zone = "UTC" }, function() end, 5) end)
            try(function() post("my.ev", {}, 5) end)
            try(function() on("my.ev", function() end, {}, 5) end)
            try(function() inspect({}, {}, 5) end)
            try(function() controller("X", nil, 5) end)
            local G = controller("G")
            app.route("goods/:id", G)
            try(function() app.open("goods/1", { x = 1 }, 5) end)
            try(function() app.open("goods/1", 5) end)
            local c = services.store:collection("x")
            try(function() c:add({ a = 1 }, function() end, 5) end)
            try(function() timer.after(0, function() end, nil) end)
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:tick() end
            function C:viewDidLoad() try(function() self:every(1, "tick", "extra") end) app.exit(0) end
            app.push(C)
            """, options: ["--ui", "plain", "--data-dir", ":memory:"])
        #expect(result.stdoutLines.prefix(14) == [
            "script.lua:2: timer.after(seconds, fn): argument #3 is one too many (it takes seconds and a function)",
            "script.lua:3: timer.every(seconds, fn): argument #3 is one too many (it takes seconds and a function)",
            "script.lua:4: timer.at(time[, options], fn): argument #3 is one too many (it takes a time, options (optional) and a function)",
            "script.lua:5: timer.cron(expression[, options], fn): argument #4 is one too many (it takes an expression, options (optional) "
                + "and a function)",
            "script.lua:6: post(name[, payload]): argument #3 is one too many (it takes a name and a payload (optional))",
            "script.lua:7: on(name, handler[, options]): argument #4 is one too many (it takes a name, a handler and options (optional))",
            "script.lua:8: inspect(value[, opts]): argument #3 is one too many (it takes a value and opts (optional))",
            "script.lua:9: controller(name[, base]): argument #3 is one too many (it takes a name and a base class (optional))",
            "script.lua:12: app.open(path[, args]): argument #3 is one too many (it takes a path and args (optional))",
            "script.lua:13: bad argument #2 to 'app.open' (args must be a table, merged into the route's parameters for init(args), got number; "
                + "e.g. app.open(\"goods/1\", { from = \"list\" }))",
            "script.lua:15: collection:add(records, completion): argument #3 is one too many (it takes records and a completion)",
            // A trailing nil is no argument.
            "nil",
            "script.lua:20: self:every(seconds, handler): argument #3 is one too many (it takes seconds and a handler)",
        ], "\(result)")

        let sandbox = try Sandbox()
        try sandbox.write("spec/v_spec.lua", """
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            it("reads the view", function()
              app.push(C)
              assert.equal("x", view_text(5))
            end)
            """)
        let test = try await crescent(["test"], in: sandbox)
        #expect(test.status == 1, "\(test)")
        #expect(test.stdout.contains("spec/v_spec.lua:5: view_text(): argument #1 is one too many (it takes none: it is the whole view of "
                                     + "the controller shown)"), "\(test)")
    }

    /// D32: a lifecycle step defined with '.' named no fix of its own, and a method called on
    /// the class after `app.push(C)` said only "attempt to index a nil value (field 'view')".
    @Test func aDotForAColonAndTheClassForTheControllerAreNamed() async throws {
        let dot = try await runScript("""
            local Shop = controller("Shop")
            function Shop:loadView() return view.text { text = "x" } end
            function Shop.viewDidLoad() self:key("r", "r") end
            app.push(Shop)
            """, stdinText: "quit\n", options: ["--ui", "plain"])
        #expect(dot.status == 1, "\(dot)")
        #expect(dot.stderr.contains("Shop.viewDidLoad was defined with '.', so it gets no self: define it with ':' (function Shop:viewDidLoad())"),
                "\(dot)")
        let onClass = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { id = "t", text = "x" } end
            function C:refresh() self.view.t:update { text = "y" } end
            app.push(C)
            timer.after(0.01, function() C:refresh() end)
            timer.after(0.05, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(onClass.status == 1, "\(onClass)")
        #expect(onClass.stderr.contains("script.lua:3: attempt to index a nil value (field 'view'); self is the class C here, which has no view "
                                        + "or state of its own: app.push(C) shows an instance of it, app.top, so call app.top:refresh(...) "
                                        + "where C:refresh(...) was written"), "\(onClass)")
        // The shown controller's own nil field gets no such hint.
        let onInstance = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:viewDidAppear() timer.after(0.01, function() return self.missing.x end) end
            app.push(C)
            timer.after(0.05, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(onInstance.stderr.contains("(field 'missing')") && !onInstance.stderr.contains("is the class"), "\(onInstance)")
    }

    /// D28: a table raised with error() in the main chunk or a timer showed as "(error object is
    /// a table value)".
    @Test func aTableRaisedOutsideAControllerIsShown() async throws {
        let main = try await runScript("error({ code = 5 })")
        #expect(main.status == 1, "\(main)")
        #expect(main.stderr.contains("crescent: script.lua:1: { code = 5 }"), "\(main)")
        let timer = try await runScript("timer.after(0, function() error({ code = 5 }) end)")
        #expect(timer.status == 1, "\(timer)")
        #expect(timer.stderr.contains("crescent: error in timer callback: script.lua:1: { code = 5 }"), "\(timer)")
    }

    /// D28: `require` of a misspelled module, `C.loadView = view.text{…}`, and a `loadView`
    /// returning no view named no near name, no place, or no traceback.
    @Test func scriptMistakesNameTheNearNameThePlaceAndTheTraceback() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("mymod.lua", "return {}\n")
        try sandbox.write("script.lua", "require(\"mymdo\")\n")
        let required = try await crescent(["script.lua"], in: sandbox)
        #expect(required.status == 1, "\(required)")
        #expect(required.stderr.contains("no module 'mymdo' beside the script; did you mean 'mymod' (./mymod.lua)?"), "\(required)")

        let component = try await runScript("""
            local C = controller("C")
            C.loadView = view.text { text = "x" }
            app.push(C)
            timer.after(0, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(component.stderr.contains("crescent: warning: script.lua:1: C.loadView is a view component (view.text), not a function, so it is "
                                          + "never called: define function C:loadView() return view.text { ... } end"), "\(component)")

        let notAView = try await runScript("""
            local C = controller("C")
            function C:loadView() return "text" end
            app.push(C)
            timer.after(0, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(notAView.status == 1, "\(notAView)")
        #expect(notAView.stderr.contains("script.lua:2: C:loadView must return a view component (view.text, view.stack, ...), got string\n"
                                         + "stack traceback:\n\tscript.lua:2: in method 'C:loadView' (which returned it)\n\t("),
                "\(notAView)")
    }

    /// D28: a Lua plugin's `view` and a process plugin's `set`/`emit` of an undeclared name gave
    /// no hint; `--plugin nope` was skipped and the run exited 0.
    @Test func pluginMistakesNameTheFix() async throws {
        let lua = try HardeningNamedMistakesTests.greetPlugin(main: """
            local s = service("greet", "says hi")
            local v = view.text { text = "hi" }
            """)
        let viewInPlugin = try await crescent(["-e", "task(function() print(pcall(services.greet.hi, services.greet)) end)"], in: lua)
        #expect(viewInPlugin.stderr.contains("plugins/greet/main.lua:2: attempt to index a nil value (global 'view'); a plugin has no view, app or "
                                             + "controller: it serves its service's properties, methods and events, and the script that uses "
                                             + "the service shows them"), "\(viewInPlugin)")

        let missing = try await crescent(["--plugin", "nope", "-e", "print(1)"], in: lua)
        #expect(missing.status != 0 && !missing.stdout.contains("1"), "\(missing)")
        #expect(missing.stderr.contains("--plugin nope: no such folder (a plugin is a folder that holds a plugin.toml)"), "\(missing)")

        let sandbox = try Sandbox()
        try sandbox.write("plugins/pyx/plugin.toml", """
            name = "pyx"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["python3", "p.py"]
            services = ["pyx"]
            """)
        try sandbox.write("plugins/pyx/p.py", PluginTestPython.loop(declaration: """
            {"services": [{"name": "pyx", "summary": "X.",
                "properties": [{"name": "count", "type": "integer", "value": 0, "doc": ""}],
                "methods": [{"name": "hello", "args": [], "returns": "string", "doc": ""}],
                "events": [{"name": "didGreet", "payload": "{ name }", "doc": ""}]}]}
            """, calls: """
                send({"jsonrpc": "2.0", "method": "set", "params": {"service": "pyx", "property": "cont", "value": 1}})
                send({"jsonrpc": "2.0", "method": "emit", "params": {"service": "pyx", "event": "didGret", "payload": {"name": "x"}}})
                send({"jsonrpc": "2.0", "id": id, "result": "hi"})
            """))
        let process = try await crescent(["-e", "task(function() print(services.pyx:hello()) end)"], in: sandbox, timeLimit: 60)
        #expect(process.stdout.contains("hi"), "\(process)")
        #expect(process.stderr.contains("set 'pyx.cont', which it does not declare; dropped (properties: count; did you mean 'count'?)"),
                "\(process)")
        #expect(process.stderr.contains("emitted 'pyx.didGret', which it does not declare; dropped (events: didGreet; did you mean 'didGreet'?)"),
                "\(process)")
    }

    /// D28: `crescent test -t`, `--output xml`, a tag no test has beside one that matched, and a
    /// `.busted` whose ROOT or tags are wrong were said without busted's name for the option, the
    /// full usage, a word, or the file they came from.
    @Test func testCommandMistakesNameTheOptionAndTheFile() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/a_spec.lua", "it(\"a #fast\", function() end)\n")
        let short = try await crescent(["test", "-t", "fast"], in: sandbox)
        #expect(short.status == 2, "\(short)")
        #expect(short.stderr.contains("Unknown option '-t'; busted's -t is crescent test's --tags: write --tags TAG"), "\(short)")
        let output = try await crescent(["test", "--output", "xml"], in: sandbox)
        #expect(output.status == 2, "\(output)")
        #expect(output.stderr.contains("Usage: crescent test [--config <file>] [--filter <pattern> ...]"), "\(output)")
        // The option is named as it was given.
        #expect(output.stderr.contains("crescent: --output xml: crescent test writes plain, json, TAP"), "\(output)")
        let shortOutput = try await crescent(["test", "-o", "xml"], in: sandbox)
        #expect(shortOutput.status == 2 && shortOutput.stderr.contains("crescent: -o xml: crescent test writes"), "\(shortOutput)")

        // A tag no test has was dropped without a word when another chose the tests.
        try sandbox.write("spec/b_spec.lua", "it(\"b #slow\", function() end)\n")
        let mixed = try await crescent(["test", "--tags", "fast,fsat", "--exclude-tags", "slw"], in: sandbox)
        #expect(mixed.status == 0 && mixed.stdoutLines.last == "1 passed, 0 failed", "\(mixed)")
        #expect(mixed.stdout.contains("note: --tags fsat: no test's name has #fsat, so it chose no test (a tag is a #word"), "\(mixed)")
        #expect(mixed.stdout.contains("note: --exclude-tags slw: no test's name has #slw, so it left out no test"), "\(mixed)")
        let found = try await crescent(["test", "--tags", "fast,slow"], in: sandbox)
        #expect(found.status == 0 && !found.stdout.contains("note:"), "\(found)")

        try sandbox.write(".busted", "return { default = { ROOT = { \"spce\" } } }\n")
        let root = try await crescent(["test"], in: sandbox)
        #expect(root.status == 2, "\(root)")
        #expect(root.stderr.contains(".busted: ROOT names spce, which does not exist; did you mean 'spec'?"), "\(root)")

        try sandbox.write(".busted", "return { default = { tags = \"fsat\" } }\n")
        let tags = try await crescent(["test"], in: sandbox)
        #expect(tags.status == 1, "\(tags)")
        #expect(tags.stdout.contains("no test is chosen by .busted's tags fsat"), "\(tags)")
    }
}
