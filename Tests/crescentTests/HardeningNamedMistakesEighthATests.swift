import Foundation
import Testing

/// Issue 39's sixth attack (new28m), D1–D12: each test is one finding, run through the
/// `crescent` binary, so `CRESCENT_BIN` can name the binary before the fixes.
@Suite struct HardeningNamedMistakesEighthATests {
    /// D1: a Lua plugin method's misspelled return type was taken as a table's name: `plugin
    /// check` said ok and every call failed asking the plugin to "return a strin".
    @Test func aMisspelledReturnTypeIsRefusedAtTheDeclaration() async throws {
        let sandbox = try HardeningNamedMistakesTests.greetPlugin(main: """
            local s = service("greet", "says hi")
            s:method("play", { "name: string" }, "strin", "Plays.", function(n) return n end)
            """)
        let result = try await crescent(["plugin", "check", "plugins/greet"], in: sandbox)
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("main.lua:2: bad argument #3 to 'method' (its return type: 'strin' is not a type (types: string, "
                                       + "number, integer, boolean, table, location, {T}, value; another word names a table); did you "
                                       + "mean 'string'?)"), "\(result)")
        // A return type in words (not a misspelled type) is still taken.
        let words = try HardeningNamedMistakesTests.greetPlugin(main: """
            local s = service("greet", "says hi")
            s:method("play", {}, "the place", "Plays.", function() return "x" end)
            s:method("stop", {}, "string?", "Stops.", function() end)
            """)
        let fine = try await crescent(["plugin", "check", "plugins/greet"], in: words)
        #expect(fine.status == 0, "\(fine)")
    }

    /// D2: `c:ad()` on a controller instance from the main chunk, a timer, a task, a remote
    /// eval or a spec was Lua's bare message; only a controller's own methods named `add`.
    @Test func aMisspelledControllerMethodIsNamedFromOutsideItsMethods() async throws {
        let controller = """
            local C = controller("C")
            function C:loadView() return view.text { id = "t" } end
            function C:add() end

            """
        let main = try await runScript(controller + "local c = app.push(C); c:ad(\"x\")\n", options: ["--ui", "plain"])
        #expect(main.status == 1, "\(main)")
        #expect(main.stderr.contains("script.lua:4: attempt to call a nil value (method 'ad'); did you mean 'add' (a method of C)?"),
                "\(main)")
        let timed = try await runScript(controller + """
            app.push(C)
            timer.after(0.05, function() app.top:ad("x") end)
            timer.after(0.2, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(timed.stderr.contains("script.lua:5: attempt to call a nil value (method 'ad'); did you mean 'add' (a method of C)?"),
                "\(timed)")
        let tasked = try await runScript(controller + """
            local c = app.push(C)
            task(function() c:ad("x") end)
            timer.after(0.2, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(tasked.stderr.contains("script.lua:5: attempt to call a nil value (method 'ad'); did you mean 'add' (a method of C)?"),
                "\(tasked)")
        // A method the controller has nothing like keeps Lua's message alone.
        let unlike = try await runScript(controller + "local c = app.push(C); c:zzzzzz()\n", options: ["--ui", "plain"])
        #expect(unlike.stderr.contains("attempt to call a nil value (method 'zzzzzz')\n"), "\(unlike)")

        let spec = try Sandbox()
        try spec.write("spec/x_spec.lua", """
            it("ctl", function()
              local C = controller("C")
              function C:loadView() return view.text { id = "t" } end
              function C:add() end
              app.push(C)
              app.top:ad("x")
            end)
            """)
        let tested = try await crescent(["test"], in: spec)
        #expect(tested.status == 1, "\(tested)")
        #expect(tested.stdout.contains("spec/x_spec.lua:6: attempt to call a nil value (method 'ad'); did you mean 'add' (a method of C)?"),
                "\(tested)")

        let remote = try Sandbox()
        try remote.write("host.lua", controller + "app.push(C)\n")
        let host = try await ListeningHost(script: "host.lua", name: "eighth-a", options: ["--ui", "plain"], sandbox: remote)
        let client = try host.client()
        let answer = client.call("eval", ["code": "app.top:ad('x')"])
        let message = (answer?["error"] as? [String: Any])?["message"] as? String
        #expect(message?.contains("attempt to call a nil value (method 'ad'); did you mean 'add' (a method of C)?") == true,
                "\(String(describing: answer))")
        _ = await host.stop()
    }

    /// D3: the payloads of a child process's and a file watcher's events were plain tables, so a
    /// misspelled field read nil.
    @Test func aMisspelledFieldOfAServiceEventPayloadIsNamed() async throws {
        let process = try await runScript("""
            local p = services.process:spawn({ "sh", "-c", "echo hi; exit 3" })
            p:on("didOutput", function(x)
              print(x.stream, x.line, x.truncated)
              print(select(2, pcall(function() return x.lin end)))
            end)
            p:on("didExit", function(x)
              print(x.status, x.signal, x.timedOut, x.error)
              print(select(2, pcall(function() return x.stauts end)))
              app.exit(0)
            end)
            """)
        #expect(process.status == 0, "\(process)")
        #expect(process.stdoutLines == [
            "stdout\thi\tfalse",
            "script.lua:4: no field 'lin' on processOutput (fields: stream, line, truncated; did you mean 'line'?)",
            "3\tnil\tfalse\tnil",
            "script.lua:8: no field 'stauts' on processExit (fields: status, signal, timedOut, error; did you mean 'status'?)",
        ], "\(process)")

        let sandbox = try Sandbox()
        try sandbox.write("w/keep", "")
        try sandbox.write("script.lua", """
            local w = services.files:watch("w")
            w:on("didChange", function(x)
              print(type(x.changes[1].path), x.changes[1].kind, x.overflow)
              print(select(2, pcall(function() return x.chnges end)))
              print(select(2, pcall(function() return x.changes[1].pth end)))
              app.exit(0)
            end)
            timer.after(0.2, function() task(function() services.files:write("w/a.txt", "x") end) end)
            timer.after(10, function() app.exit(1) end)
            """)
        let watched = try await crescent(["script.lua"], in: sandbox)
        #expect(watched.status == 0, "\(watched)")
        #expect(watched.stdoutLines == [
            "string\tcreated\tnil",
            "script.lua:4: no field 'chnges' on fileChanges (fields: changes, overflow; did you mean 'changes'?)",
            "script.lua:5: no field 'pth' on fileChange (fields: path, kind; did you mean 'path'?)",
        ], "\(watched)")
    }

    /// D4: the stubs had no `fake.process`, and typed a collection's change set as an open
    /// table without its `items`.
    @Test func theStubsTypeFakeProcessAndAClosedChangeSet() async throws {
        let sandbox = try Sandbox()
        let made = try await crescent(["stubs", "--out", "types"], in: sandbox)
        #expect(made.status == 0, "\(made)")
        let testing = try String(contentsOfFile: sandbox.path + "/types/testing.lua", encoding: .utf8)
        #expect(testing.contains("function fake.process(answers) end"), "\(testing)")
        #expect(testing.contains("---@return crescent.test.FakeProcess"), "\(testing)")
        let globals = try String(contentsOfFile: sandbox.path + "/types/globals.lua", encoding: .utf8)
        #expect(globals.contains("---@class crescent.change\n"), "\(globals)")
        #expect(!globals.contains("---@class crescent.change:"), "\(globals)")
        #expect(globals.contains("---@field items crescent.record[]?"), "\(globals)")
    }

    /// D5: remote completion of a command's argument offered Lua's globals and keywords.
    @Test func remoteCompletionOfACommandArgumentOffersItsCompletions() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("host.lua", """
            local C = controller("C")
            function C:loadView() return view.text { id = "t" } end
            function C:viewDidLoad()
              self:command("add", "add", "adds", { args = { "item: string" }, complete = function(i, p) return { "milk", "mint" } end })
              self:command("say", "say", "says", { args = { "word: string" } })
            end
            function C:add() end
            function C:say() end
            app.push(C)
            """)
        let host = try await ListeningHost(script: "host.lua", name: "eighth-a-complete", options: ["--ui", "plain"], sandbox: sandbox)
        let client = try host.client()
        let completed = client.call("complete", ["line": ":add m", "cursor": 6])?["result"] as? [String: Any]
        #expect(completed?["items"] as? [String] == ["milk", "mint"], "\(String(describing: completed))")
        #expect(completed?["from"] as? Int == 5, "\(String(describing: completed))")
        let plain = client.call("complete", ["line": ":say "])?["result"] as? [String: Any]
        #expect(plain?["items"] as? [String] == [], "\(String(describing: plain))")
        let name = client.call("complete", ["line": ":a"])?["result"] as? [String: Any]
        #expect(name?["items"] as? [String] == ["add"], "\(String(describing: name))")
        _ = await host.stop()
    }

    /// D7: `crescent test --ui plain` suggested `--junit`, which shares nothing with `--ui`.
    @Test func aRunOptionGivenToASubcommandSaysWhoseItIs() async throws {
        let result = try await crescent(["test", "--ui", "plain"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("crescent: crescent test takes no option '--ui': --ui is an option of a script run "
                                       + "(crescent [options] SCRIPT.lua); leave it out of 'crescent test'"), "\(result)")
        #expect(!result.stderr.contains("--junit'?"), "\(result)")
        #expect(result.stderr.contains("Usage: crescent test"), "\(result)")
    }

    /// D8: components in a field (`children = {…}`) were blamed as values a view cannot show.
    @Test func componentsInAFieldOfARowOrStackAreNamed() async throws {
        let result = try await runScript("""
            print(select(2, pcall(function() return view.row { id = "r", children = { view.text { id = "x" } } } end)))
            print(select(2, pcall(function() return view.stack { items = { view.text { id = "y" } } } end)))
            print(select(2, pcall(function() return view.row { foo = 1 } end)))
            """)
        #expect(result.stdoutLines == [
            "script.lua:1: view.row takes its components as list items, not in a field 'children': view.row { view.text { ... }, view.text { ... } }",
            "script.lua:2: view.stack takes its components as list items, not in a field 'items': view.stack { view.text { ... }, view.text { ... } }",
            "script.lua:3: view.row: no field 'foo' (fields: id, gap)",
        ], "\(result)")
    }

    /// D9: `help` and `crescent services` did not know the objects services hand out, and a
    /// misspelled method in `help("store.colection")` got no closest name.
    @Test func helpAndServicesDocumentTheObjectTypes() async throws {
        let result = try await runScript("""
            help("collection")
            print("--")
            help("collection:find")
            print("--")
            help("store.colection")
            """)
        #expect(result.status == 0, "\(result)")
        let parts = result.stdout.components(separatedBy: "--\n")
        #expect(parts.count == 3, "\(result)")
        #expect(parts.first?.contains("find(") == true && parts.first?.contains("no documentation") == false, "\(result)")
        #expect(parts.dropFirst().first?.contains("collection:find(") == true, "\(result)")
        #expect(parts.last == "help: no documentation for 'store.colection' (store has no method 'colection'; did you mean "
                + "'store.collection'?)\n", "\(result)")
        let services = try await crescent(["services", "collection"])
        #expect(services.status == 0, "\(services)")
        #expect(services.stdout.contains("find("), "\(services)")
    }

    /// D10: a command bound twice on one line (other help) replaced the first without a word.
    @Test func aCommandBoundTwiceOnOneLineIsWarned() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { id = "t", text = "hi" } end
            function C:r() end
            function C:viewDidLoad() self:command("r", "r", "x") self:command("r", "r", "y") end
            app.push(C) timer.after(0.2, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("warning: script.lua:4: self:command(\"r\", \"r\") binds the command 'r' again, replacing its "
                                       + "binding to 'r' made at script.lua:4"), "\(result)")
    }

    /// D11: `json.decod` was Lua's bare "attempt to call a nil value (field 'decod')".
    @Test func aMisspelledJSONFunctionIsNamed() async throws {
        let result = try await runScript("""
            print(select(2, pcall(function() return json.decod("{}") end)))
            print(select(2, pcall(function() return json.encod({}) end)))
            print(json.decode("[1]")[1])
            """)
        #expect(result.stdoutLines == [
            "script.lua:1: no function 'json.decod' (json: array, decode, encode, null, object; did you mean 'decode'?)",
            "script.lua:2: no function 'json.encod' (json: array, decode, encode, null, object; did you mean 'encode'?)",
            "1",
        ], "\(result)")
    }

    /// D12: `app.send` with an argument of the wrong type was a warning with a hint to quote a
    /// typed line, and the script went on.
    @Test func appSendWithAWrongTypedArgumentIsAnError() async throws {
        let controller = """
            local C = controller("C")
            function C:loadView() return view.text { id = "t", text = "hi" } end
            function C:viewDidLoad() self:command("add", "add", "add", { args = { "item: string", "qty: integer?" } }) end
            function C:add(item, qty) print("add", item, qty) end
            app.push(C)

            """
        let result = try await runScript(controller + """
            timer.after(0.05, function() app.send("add", "milk", "two") end)
            timer.after(0.3, function() app.exit(0) end)
            """, options: ["--ui", "plain"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("script.lua:6: app.send: command 'add': argument #2 'qty' must be an integer, got 'two'"), "\(result)")
        #expect(!result.stderr.contains("quote it"), "\(result)")
        // A typed line keeps its hint.
        let typed = try await runScript(controller, stdinText: "add milk two\nquit\n", options: ["--ui", "plain"])
        #expect(typed.stderr.contains("quote it: add \"milk two\""), "\(typed)")
    }
}
