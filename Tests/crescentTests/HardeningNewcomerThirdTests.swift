import Foundation
import Testing

/// What the second newcomer probe of issue 39 left open: plugins' values against their
/// declarations (S5), views shown wrong without a word (S1), poor messages (P2–P7).
@Suite struct HardeningNewcomerThirdTests {
    /// S5: `settings.greting` read nil; a method declared `string` that returned 5 handed the
    /// caller 5; `emit("didGreet", { nme = n })` for a payload declared `{ name }` was delivered with `nme`.
    @Test func aLuaPluginsSettingsResultsAndPayloadsAreCheckedAgainstItsDeclarations() async throws {
        let sandbox = try luaPluginSandbox("greeter", main: """
            local greeter = service("greeter", "Greets.")
            greeter:event("didGreet", "{ name }", "Someone was greeted.")
            greeter:method("count", {}, "string", "Wrong type.", function() return 5 end)
            greeter:method("remove", {}, "true", "A literal type.", function() return true end)
            greeter:method("places", {}, "{place}|nil", "An array of tables.", function() return { { name = "a" } } end)
            greeter:method("setting", {}, "string", "Reads a setting.", function()
              return tostring(settings.greting)
            end)
            greeter:method("declared", {}, "string?", "Reads a declared setting without a value.", function()
              return settings.greeting
            end)
            greeter:method("emit", {}, "nil", "Emits.", function()
              greeter:emit("didGreet", { nme = "Ada" })
              greeter:emit("didGreet", { name = "Ada" })
            end)
            """)
        try sandbox.write("plugins/greeter/plugin.toml", """
            name = "greeter"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["greeter"]

            [settings.greeting]
            type = "string"
            doc = "How to greet."
            """)
        let result = try await crescent(["-e", """
            local g = services.greeter
            g:on("didGreet", function(p) print("got", p.name) end)
            task(function()
              print(select(2, g:count()))
              print(g:remove())
              print(#g:places())
              print(select(2, g:setting()))
              print(g:declared())
              g:emit()
            end)
            """], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "greeter.count: internal: plugin 'greeter': greeter:count returned number (5), which is not its declared type string "
                + "(plugins/greeter/main.lua:3 declares it): "
                + "return a string from it, or declare the type it returns in its declaration",
            "true\tnil",
            "1",
            "greeter.setting: internal: plugin 'greeter': plugins/greeter/main.lua:7: settings.greting: plugin 'greeter' declares no "
                + "setting 'greting' (settings: greeting; did you mean 'greeting'?); a setting is declared as [settings.greting] in "
                + "plugins/greeter/plugin.toml",
            "nil\tnil",
            // Delivered without the field its payload does not declare.
            "got\tnil",
            "got\tAda",
        ], "\(result)")
        #expect(result.stderr.contains("emitted 'greeter.didGreet' with field 'nme', which its payload { name } does not declare "
                                       + "(fields: name; did you mean 'name'?); that field was dropped"), "\(result)")
    }

    /// S5: a process plugin's result, payload and error code are checked the same way.
    @Test func aProcessPluginsResultsPayloadsAndErrorCodesAreChecked() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/pyp/plugin.toml", """
            name = "pyp"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["python3", "pyp.py"]
            services = ["pyp"]
            """)
        try sandbox.write("plugins/pyp/pyp.py", PluginTestPython.loop(declaration: """
            {"services": [{"name": "pyp", "summary": "P.",
                "methods": [{"name": "count", "args": [], "returns": "string", "doc": ""},
                            {"name": "fail", "args": [], "returns": "nil", "doc": ""}],
                "events": [{"name": "didGreet", "payload": "{ name }", "doc": ""}]}]}
            """, calls: """
                if name == "count":
                    send({"jsonrpc": "2.0", "method": "emit", "params": {"service": "pyp", "event": "didGreet", "payload": {"nme": "x"}}})
                    send({"jsonrpc": "2.0", "id": id, "result": 5})
                else:
                    send({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "name is empty", "data": {"code": "bad_code"}}})
            """))
        let result = try await crescent(["-e", """
            services.pyp:on("didGreet", function(p) io.stderr:write("got ", tostring(next(p)), "\\n") end)
            task(function()
              print(select(2, services.pyp:count()))
              print(select(2, services.pyp:fail()))
            end)
            """], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "pyp.count: internal: plugin 'pyp': pyp:count returned number (5), which is not its declared type string: "
                + "return a string from it, or declare the type it returns in its declaration",
            "pyp.fail: internal: name is empty",
        ], "\(result)")
        #expect(result.stderr.contains("emitted 'pyp.didGreet' with field 'nme', which its payload { name } does not declare "
                                       + "(fields: name; did you mean 'name'?); that field was dropped"), "\(result)")
        #expect(result.stderr.contains("got nil\n"), "\(result)")
        #expect(result.stderr.contains("answered pyp:fail with error code 'bad_code', which is no code (codes: "), "\(result)")
        #expect(result.stderr.contains("); the caller gets internal"), "\(result)")
    }

    /// S1: view mistakes that rendered wrong without a word: `style = "bolt"`, a column's `algn`,
    /// a row keyed `itme` under column `item`, `{{nme}}` with data `name`, `value = 150` (of total
    /// 1), `total = 0`.
    @Test func viewMistakesThatRenderedWrongAreErrors() async throws {
        let result = try await runScript("""
            local function try(f) print((select(2, pcall(f)))) end
            try(function() view.text { text = "x", style = "bolt" } end)
            try(function() view.table { columns = { { key = "a", algn = "right" } } } end)
            try(function() view.table { columns = { { key = "a", align = "rigth" } } } end)
            try(function() view.table { columns = { "item" }, rows = { { itme = "x" } } } end)
            try(function() view.table { columns = { "item" }, rows = { { thing = "x" } } } end)
            try(function() view.template { source = "Hello {{nme}}!", data = { name = "Ada" } } end)
            try(function() view.progress { value = 150 } end)
            try(function() view.progress { value = 1, total = 0 } end)
            try(function() view.progress { value = -1, total = 10 } end)
            try(function() view.keyvalue { pairs = { { "a" } } } end)
            local t = timer.every(1, print)
            try(function() t.cancel() end)
            t:cancel()
            try(function() timer.cron("@hourli", print) end)
            local ok = view.stack {
              view.text { text = "x", style = "bold" },
              view.table { columns = { { key = "a", align = "right" }, "item" }, rows = { { a = 1, item = "x", id = 7 } } },
              view.template { source = "Hello {{name}}{{suffix}}!", data = { name = "Ada" } },
              view.progress { value = 50, total = 100 },
            }
            print(ok ~= nil)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "script.lua:2: view.text: no style 'bolt' (styles: plain, bold, dim, italic, underline, reverse; did you mean 'bold'?)",
            "script.lua:3: view.table: column 1: no field 'algn' (fields: key, title, align, width; did you mean 'align'?)",
            "script.lua:4: view.table: column 1: align must be \"left\" or \"right\", got \"rigth\"; did you mean 'right'?",
            "script.lua:5: view.table: row 1 has 'itme', which no column shows (columns: item); did you mean 'item'?",
            "script.lua:6: view.table: row 1 has none of the columns' keys (row: thing; columns: item): a row is a table keyed by its columns' keys",
            "script.lua:7: view.template: {{nme}} names no field of data (fields: name); did you mean 'name'?",
            "script.lua:8: view.progress: value 150 is outside 0 to total (1): the total is 1 unless given: give total = 100 for a percentage, "
                + "or a value from 0 to 1",
            "script.lua:9: view.progress: total must be above 0, got 0 (the bar shows value / total)",
            "script.lua:10: view.progress: value -1 is outside 0 to total (10): set total first when both change",
            "script.lua:11: view.keyvalue: pair 1 must be { key, value } or { key = ..., value = ... }, got [\"a\"] "
                + "(a record shows as it is: pairs = { place = \"x\" })",
            "script.lua:13: bad argument #1 to 'cancel' (Timer expected, got no value: call it with ':' on the Timer (x:cancel()))",
            "script.lua:15: bad argument #1 to 'timer.cron' ('@hourli' is not a schedule's name (names: @hourly, @daily, @midnight, "
                + "@weekly, @monthly, @yearly, @annually; did you mean '@hourly'?))",
            "true",
        ], "\(result)")
    }

    /// Issue 38 M14: under `crescent test`, a real `files:watch` did not deliver a real change on
    /// `clock.advance`: the clock moved before the watcher's thread had read the event. Twenty
    /// rounds of touch, then advance, each change delivered by its advance.
    @Test func aRealWatchDeliversARealChangeOnClockAdvance() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("w/keep", "")
        let (result, _) = try await TestCommandTests.run(["watch_spec.lua": """
            it("delivers each touch on the next advance", function()
              local seen = {}
              local watch = services.files:watch("w")
              watch:on("didChange", function(e) for _, c in ipairs(e.changes) do seen[#seen + 1] = c.path end end)
              clock.advance(0)
              for i = 1, 20 do
                local f = assert(io.open("w/f" .. i, "w"))
                f:write("x")
                f:close()
                clock.advance(1)
                assert.equal(i, #seen, "round " .. i)
              end
              watch:cancel()
            end)
            """], sandbox: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.last == "1 passed, 0 failed", "\(result)")
    }

    /// P3: a Lua plugin's `set`/`emit` of an undeclared name was located in the host's prelude
    /// (`[crescent plugin]:327`) without the declared names, `svc.set(...)` with a dot was a bare
    /// bad argument, `requires = ["locaton"]` named no service, and a service not required was
    /// "no service 'location' (services: none)".
    @Test func aLuaPluginsMistakesNameItsLineAndTheNamesThereAre() async throws {
        let sandbox = try luaPluginSandbox("greeter", main: """
            local greeter = service("greeter", "Greets.")
            greeter:property("count", "integer", "How many.", 0)
            greeter:event("didGreet", "{ name }", "Someone was greeted.")
            greeter:method("bad", {}, "nil", "Mistakes.", function()
              print(select(2, pcall(function() greeter:set("cont", 1) end)))
              print(select(2, pcall(function() greeter:emit("didGret", {}) end)))
              print(select(2, pcall(function() greeter.set("count", 1) end)))
              print(select(2, pcall(function() return services.location end)))
            end)
            """)
        let result = try await crescent(["-e", "task(function() services.greeter:bad() end)"], in: sandbox)
        #expect(result.stdoutLines == [
            "plugins/greeter/main.lua:5: greeter:set('cont', ...): no property 'cont' is declared (properties: count; did you mean 'count'?); "
                + "declare it with greeter:property(\"cont\", type, doc, initial)",
            "plugins/greeter/main.lua:6: greeter:emit('didGret', ...): no event 'didGret' is declared (events: didGreet; did you mean 'didGreet'?)",
            "plugins/greeter/main.lua:7: set(...): call it with ':' on the service object (svc:set(...)), got string as self",
            "plugins/greeter/main.lua:8: no service 'location' (services: none): a plugin sees only the services its plugin.toml requires; "
                + "add \"location\" to requires",
        ], "\(result)")
        _ = try luaPluginSandbox("greeter", main: "service(\"greeter\", \"Greets.\")", requires: "[\"locaton\"]", in: sandbox)
        let required = try await crescent(["-e", "print(services.greeter)"], in: sandbox)
        #expect(required.stderr.contains("field 'requires': no plugin provides service 'locaton' (services: "), "\(required)")
        #expect(required.stderr.contains("did you mean 'location'?)"), "\(required)")
    }

    /// S7 and P7: `crescent help plugin nwe` printed plugin's help (exit 0); `crescent repl --help`
    /// showed `USAGE: crescent repl <options>`, which reads as a required argument.
    @Test func helpOfAMisspelledSubcommandIsAnErrorAndReplsUsageIsTrue() async throws {
        let sandbox = try Sandbox()
        let help = try await crescent(["help", "plugin", "nwe"], in: sandbox)
        #expect(help.status == 2, "\(help)")
        #expect(help.stderr.contains("help: plugin: no subcommand 'nwe'; did you mean 'crescent plugin new'?"), "\(help)")
        let repl = try await crescent(["repl", "--help"], in: sandbox)
        #expect(repl.stdout.contains("USAGE: crescent repl [options]"), "\(repl)")
    }

    /// P4: an unknown option listed the options without the closest (`timout`, `debounse`).
    @Test func anUnknownOptionSuggestsTheClosest() async throws {
        let result = try await runScript("""
            print(select(2, pcall(function() services.files:watch(".", { debounse = 1 }) end)))
            print(select(2, pcall(function() on("location.didFail", print, { onse = true }) end)))
            """)
        #expect(result.stdoutLines.count == 2, "\(result)")
        #expect(result.stdoutLines.first?.contains("unknown option 'debounse' (options: debounce, glob, recursive; did you mean 'debounce'?)") == true,
                "\(result)")
        #expect(result.stdoutLines.last?.contains("unknown option 'onse' (options: ") == true, "\(result)")
        #expect(result.stdoutLines.last?.contains("did you mean 'once'?") == true, "\(result)")
    }

    /// S7: a letter the controller does not bind (`Z`) did nothing and said nothing on the live
    /// screen; the status line says so now.
    @Test func anUnboundKeySaysSoOnTheStatusLine() async throws {
        let (result, _) = try await TestCommandTests.run(["key_spec.lua": """
            it("says what an unbound key is", function()
              local T = controller("T")
              function T:loadView() return view.text { text = "x" } end
              app.push(T)
              clock.advance(0)
              press("Z")
              clock.advance(0)
              assert.matches("no key 'Z' in T %(%? lists the keys%)", screen_text(60, 4))
            end)
            """])
        #expect(result.stdoutLines.last == "1 passed, 0 failed", "\(result)")
    }
}
