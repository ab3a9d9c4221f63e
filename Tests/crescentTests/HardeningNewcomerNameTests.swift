import Testing

/// The newcomer probe of issue 39, findings 22, 23 and 25 (the rest): a misspelled view id,
/// component field or method, a misspelled `app` function and a misspelled key or section of
/// crescent.toml are named with the names there are and the closest one.
@Suite struct HardeningNewcomerNameTests {
    /// `self.view.title` (the id is `t`), `t:updat`, `items.itms`: Lua's bare "attempt to index a
    /// nil value (field 'title')" or a silent nil before. A field the component takes but was
    /// not given still reads nil.
    @Test func aMisspelledViewIdFieldOrMethodIsNamed() async throws {
        let result = try await runScript("""
            local T = controller("T")
            function T:loadView()
              return view.stack { view.text { id = "t", text = "hi" }, view.list { id = "items", items = { "a" }, selectable = true } }
            end
            function T:viewDidAppear()
              print(select(2, pcall(function() return self.view.title end)))
              print(select(2, pcall(function() return self.view.itms end)))
              print(select(2, pcall(function() self.view.t:updat("y") end)))
              print(select(2, pcall(function() return self.view.items.itms end)))
              print(self.view.t.style, self.view.items.selected, self.view.t.text, self.view.root ~= nil)
              app.exit(0)
            end
            app.push(T)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "script.lua:6: no component with id 'title' in T's view (ids: t, items)",
            "script.lua:7: no component with id 'itms' in T's view (ids: t, items; did you mean 'items'?)",
            "script.lua:8: no method 'updat' on view.text (methods: apply, find, select, set, update; did you mean 'update'?)",
            "script.lua:9: no field 'itms' on view.list (fields: id, kind, items, marker, selectable, selected, selectedItem; did you mean 'items'?)",
            "nil\t1\thi\ttrue",
        ], "\(result)")
    }

    /// `app.pushh` names the closest function; a name close to none is the script's own field
    /// of `app` and reads nil.
    @Test func aMisspelledAppFunctionIsNamed() async throws {
        let result = try await runScript("""
            print(select(2, pcall(function() app.pushh({}) end)))
            print(select(2, pcall(function() return app.exti end)))
            app.settings = app.settings or { theme = "dark" }
            print(app.settings.theme, app.somethingElse)
            """)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.count == 3, "\(result)")
        #expect(lines.first?.hasPrefix("script.lua:1: no function 'app.pushh' (app: ") == true, "\(result)")
        #expect(lines.first?.hasSuffix("; did you mean 'push'?)") == true, "\(result)")
        #expect(lines.dropFirst().first?.hasSuffix("; did you mean 'exit'?)") == true, "\(result)")
        #expect(lines.last == "dark\tnil", "\(result)")
    }

    /// Finding 22: a chunk sent by `crescent eval` (as one typed at the REPL) gets its
    /// traceback folded: the chunk's frames, then one line for the host's; a traceback of host
    /// frames only (a tail call from the chunk) is folded too.
    @Test func anEvalsTracebackFoldsTheHostsFrames() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("idle.lua", "timer.every(60, function() end)\n")
        let host = try await ListeningHost(script: "idle.lua", name: "idle", sandbox: sandbox)
        let failure = try await host.crescentCommand(["eval", "idle", "local function f() error('boom') end f()"])
        #expect(failure.status == 1, "\(failure)")
        #expect(failure.stderr.contains("remote:1: boom"), "\(failure)")
        #expect(failure.stderr.contains("remote:1: in "), "\(failure)")
        #expect(failure.stderrLines.contains { $0.hasPrefix("\t(") && $0.contains("host frame") }, "\(failure)")
        #expect(!failure.stderr.contains("[C]: in "), "\(failure)")
        let hostOnly = try await host.crescentCommand(["eval", "idle", "app.push('Tick')"])
        #expect(hostOnly.status == 1, "\(hostOnly)")
        #expect(hostOnly.stderr.contains("app.push: expected a controller class or instance, got string"), "\(hostOnly)")
        #expect(!hostOnly.stderr.contains(#/\[crescent controllers\w*\]:/#), "\(hostOnly)")
        _ = await host.stop()
    }

    /// Finding 23: Lua's "attempt to call a nil value (method 'evry')" in a controller's own code
    /// gets the method or helper of the controller it resembles.
    @Test func aMisspelledHelperOfAControllerSuggestsTheHelper() async throws {
        let result = try await runScript("""
            local T = controller("T")
            function T:loadView() return view.text { text = "hi" } end
            function T:tick() end
            function T:viewDidLoad() self:evry(1, "tick") end
            function T:viewDidAppear() self:tik() end
            app.push(T)
            """, stdinText: "")
        #expect(result.stderr.contains("error in T:viewDidLoad: script.lua:4: attempt to call a nil value (method 'evry'); did you mean 'every' (a method of T)?"),
                "\(result)")
        #expect(result.stderr.contains("error in T:viewDidAppear: script.lua:5: attempt to call a nil value (method 'tik'); did you mean 'tick' (a method of T)?"),
                "\(result)")
    }

    /// Finding 25: `assert.matches(pattern, view_text)` (the function, not its result) says to
    /// call it; it failed with "actual: <function: [crescent testing]:289>".
    @Test func matchingAFunctionSaysToCallIt() async throws {
        let (result, _) = try await TestCommandTests.run(["m_spec.lua": """
            it("view", function() assert.matches("x", view_text) end)
            """])
        #expect(result.stdoutLines.last == "0 passed, 1 failed", "\(result)")
        #expect(result.stdout.contains("spec/m_spec.lua:1: bad argument #2 to 'matches' (string expected, got a function: call it, "
                                       + "as in assert.matches(pattern, view_text()))"), "\(result)")
    }

    /// Finding 22: the REPL folds the host's frames of a traceback into one line, also when the
    /// chunk's own frame is gone (`app.push("Tick")` is a tail call of the chunk).
    @Test func theReplFoldsTheHostsFramesOfATraceback() async throws {
        let sandbox = try Sandbox()
        let repl = try InteractiveTerminal(["--data-dir", sandbox.path + "/data"], directory: sandbox.path,
                                           environment: ["CRESCENT_HISTORY": sandbox.path + "/history"])
        await repl.waitFor(line: ".help for help")
        repl.type("app.push(\"Tick\")\r")
        await repl.waitFor(line: "app.push: expected a controller class or instance, got string")
        await repl.waitFor(line: "host frames: ")
        #expect(!repl.text.contains(#/\[crescent controllers\w*\]:/#), "\(repl.text)")
        repl.type("app.exit(0)\r")
        #expect(await repl.finish() == 0)
    }

    /// Finding 25: `plugin new Foo` is a usage error (exit 2, its own usage) suggesting `foo`;
    /// `crescent test main.lua` says the file is not a spec and how to run it.
    @Test func aPluginNameOrAScriptGivenWhereASpecGoesIsNamed() async throws {
        let sandbox = try Sandbox()
        let named = try await crescent(["plugin", "new", "Foo", "--lua"], in: sandbox)
        #expect(named.status == 2, "\(named)")
        #expect(named.stderr.contains("the plugin name must match [a-z][a-z0-9_]*, at most 64 characters, got \"Foo\"; did you mean 'foo'?"), "\(named)")
        #expect(named.stderr.contains("plugin new"), "\(named)")
        try sandbox.write("main.lua", "print(1)\n")
        let tested = try await crescent(["test", "main.lua"], in: sandbox)
        #expect(tested.status == 1, "\(tested)")
        #expect((tested.stdout + tested.stderr).contains(
            "main.lua is not named *_spec.lua: if it is a script, run it with crescent main.lua; crescent test runs the specs in spec/"),
                "\(tested)")
    }

    /// Finding 23: two components with one id in a view are an error where the view is built
    /// (self.view.t found one of them, silently).
    @Test func twoComponentsWithOneIdAreNamed() async throws {
        let result = try await runScript("""
            print(select(2, pcall(function() return view.stack { view.text { id = "t" }, view.row { view.text { id = "t" } } } end)))
            print(view.stack { view.text { id = "a" }, view.row { view.text { id = "b" } } }.kind)
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "script.lua:1: view.stack: two components have id 't'; an id names one component of a view (self.view.t), so give each its own",
            "stack",
        ], "\(result)")
    }
}
