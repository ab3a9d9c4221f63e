import Foundation
import Testing

/// What the fourth attack on issue 39 (new25) found: exits that forgave a failed teardown,
/// repeated options that dropped all but the last, names a builtin or a remote request took
/// without a word, and hints that sent the user to a fix that fails. Each test is one finding
/// (its number in the report, D1…), run through the `crescent` binary.
@Suite struct HardeningNamedMistakesFourthAttackTests {
    /// D1: an error in `viewWillDisappear`, `viewDidDisappear` or `dealloc` while the app quits
    /// was printed, and the run still exited 0.
    @Test(arguments: [
        ("viewWillDisappear", "printf"),
        ("viewDidDisappear", "printf"),
        ("dealloc", "timer"),
    ])
    func aTeardownStepThatFailsWhileQuittingExitsOne(step: String, ending: String) async throws {
        let quit = ending == "timer" ? "timer.after(0.05, function() app.exit(0) end)" : ""
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:\(step)() error("teardown boom") end
            app.push(C)
            \(quit)
            """, stdinText: ending == "timer" ? "" : "quit\n", options: ["--ui", "plain", "--keep-running"])
        #expect(result.stderr.contains("error in C:\(step): script.lua:3: teardown boom"), "\(result)")
        #expect(result.status == 1, "\(result)")
    }

    /// D2: a second `-e` replaced the first; `lua5.4` runs each chunk in order.
    @Test func eachDashEChunkRunsInOrder() async throws {
        let result = try await crescent(["-e", "x = 1 print('first')", "-e", "print('second', x)"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["first", "second\t1"], "\(result)")
        // An error in a chunk stops the run there, as lua5.4's does.
        let failed = try await crescent(["-e", "error('early')", "-e", "print('never')"])
        #expect(failed.status == 1, "\(failed)")
        #expect(failed.stderr.contains("(command line):1: early"), "\(failed)")
        #expect(!failed.stdout.contains("never"), "\(failed)")
    }

    /// D34: a repeated `--filter` kept only the last; busted runs the tests any of them matches.
    @Test func repeatedFiltersRunTheTestsAnyOfThemMatches() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/a_spec.lua", """
            describe("d", function()
              it("one", function() end)
              it("two", function() end)
              it("three", function() end)
            end)
            """)
        let result = try await crescent(["test", "--filter", "one", "--filter", "two"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.last == "2 passed, 0 failed", "\(result)")
        #expect(result.stdout.contains("d one") && result.stdout.contains("d two") && !result.stdout.contains("d three"), "\(result)")
        let none = try await crescent(["test", "--filter", "fou", "--filter", "fiv"], in: sandbox)
        #expect(none.status == 1, "\(none)")
        #expect(none.stdout.contains("no test's full name matches --filter fou or --filter fiv"), "\(none)")
    }

    /// D3: `[plugins] disabled = ["location"]` turned nothing off without a word, and
    /// `"standard"` (the builtin `crescent plugins` lists) was called no plugin.
    @Test func aDisabledBuiltinIsNamedAsOneThatCannotBeTurnedOff() async throws {
        let sandbox = try HardeningNamedMistakesTests.greetPlugin()
        try sandbox.write("crescent.toml", "[plugins]\ndisabled = [\"location\", \"standard\", \"gret\"]\n")
        let result = try await crescent(["-e", "print('ran')"], in: sandbox)
        #expect(result.status == 0 && result.stdout.contains("ran"), "\(result)")
        for name in ["location", "standard"] {
            #expect(result.stderr.contains("warning: crescent.toml:2: [plugins] disabled names '\(name)', which is built into crescent and cannot "
                                           + "be turned off, so it turns nothing off; disabled takes the names of plugins found in plugin folders "
                                           + "(plugins: greet)"), "\(result)")
        }
        // The list names the plugins disabled can turn off, not the builtin services.
        #expect(result.stderr.contains("[plugins] disabled names no plugin 'gret', so it turns nothing off (plugins: greet; did you mean 'greet'?)"),
                "\(result)")
    }

    /// D35: a misspelled key in a process plugin's `initialize` answer (`methds`, `dc`) was
    /// dropped, and `plugin check` said ok.
    @Test func aMisspelledKeyOfAProcessPluginsDeclarationIsNamed() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/pyx/plugin.toml", """
            name = "pyx"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["python3", "p.py"]
            services = ["pyx"]
            """)
        func declare(_ service: String) throws {
            try sandbox.write("plugins/pyx/p.py", PluginTestPython.loop(
                declaration: #"{"services": [\#(service)]}"#,
                calls: #"    send({"jsonrpc": "2.0", "id": id, "result": "hi"})"#))
        }
        try declare(#"{"name": "pyx", "summary": "X.", "methds": [{"name": "hello", "args": [], "returns": "string"}]}"#)
        let check = try await crescent(["plugin", "check", "plugins/pyx"], in: sandbox, timeLimit: 60)
        #expect(check.stdout.contains("services[1] has no key 'methds' (keys: name, summary, properties, methods, events; did you mean 'methods'?)")
                || check.stderr.contains("services[1] has no key 'methds' (keys: name, summary, properties, methods, events; did you mean 'methods'?)"),
                "\(check)")
        #expect(check.status != 0, "\(check)")
        try declare(#"{"name": "pyx", "summary": "X.", "methods": [{"name": "hello", "args": [], "return": "string"}]}"#)
        let method = try await crescent(["plugin", "check", "plugins/pyx"], in: sandbox, timeLimit: 60)
        #expect((method.stdout + method.stderr).contains("services[1].methods[1] ('hello') has no key 'return' (keys: name, args, returns, doc; "
                                                         + "did you mean 'returns'?)"), "\(method)")
        try declare(#"{"name": "pyx", "summary": "X.", "properties": [{"name": "n", "type": "integer", "value": 1, "dc": "N."}]}"#)
        let property = try await crescent(["plugin", "check", "plugins/pyx"], in: sandbox, timeLimit: 60)
        #expect((property.stdout + property.stderr).contains("services[1].properties[1] ('n') has no key 'dc' (keys: name, type, doc, value; "
                                                             + "did you mean 'doc'?)"), "\(property)")
    }

    /// D4: `app.send` of a command the top controller does not have warned, returned true, and
    /// the run exited 0.
    @Test func anUnknownCommandFromAppSendIsAnErrorTheScriptSees() async throws {
        let result = try await runScript("""
            local C = controller("C")
            function C:loadView() return view.text { text = "x" } end
            function C:viewDidLoad() self:command("add", "add") end
            function C:add(item) print("added", item) end
            app.push(C)
            timer.after(0, function()
              print(pcall(function() local sent = app.send("ad", "x") return sent end))
              print(pcall(function() local sent = app.send("add", "y") return sent end))
              timer.after(0.05, function() app.exit(0) end)
            end)
            """, stdinText: "", options: ["--ui", "plain", "--keep-running"])
        #expect(result.stdout.contains("false\tscript.lua:7: app.send: unknown command 'ad'; commands of C: add, help, quit; did you mean 'add'?"),
                "\(result)")
        #expect(result.stdout.contains("true\t") && result.stdout.contains("added\ty"), "\(result)")
        #expect(!result.stderr.contains("unknown command"), "\(result)")
    }

    /// D5: the remote `on` took a misspelled event of a service and answered a subscription
    /// that never fires. D6: misspelled params were dropped or reported only as missing, and an
    /// unknown method named no near one.
    @Test func remoteNamesAreCheckedAsTheScriptsAre() async throws {
        let host = try await ListeningHost(script: RemoteControlTests.groceries, name: "named4", options: ["--data-dir", "data"])
        let client = try host.client()
        func message(_ answer: [String: Any]?) -> String {
            ((answer?["error"] as? [String: Any])?["message"] as? String) ?? "no error: \(String(describing: answer))"
        }
        #expect(message(client.call("on", ["event": "location.didFai"]))
                == "invalid params: on: 'didFai' is not an event of location (events: didUpdateLocations, didFail; did you mean 'didFail'?)")
        let near = client.call("on", ["event": "locaton.didFail"])
        let warning = (near?["result"] as? [String: Any])?["warning"] as? String
        #expect(warning?.contains("no service is named 'locaton'; did you mean 'location' (on(\"location.didFail\", handler))?") == true,
                "\(String(describing: near))")
        #expect(message(client.call("hello", ["outpt": true])) == "invalid params: hello: no param 'outpt' (params: output; did you mean 'output'?)")
        #expect(message(client.call("eval", ["cod": "1"])) == "invalid params: eval: no param 'cod' (params: code; did you mean 'code'?)")
        #expect(message(client.call("view", ["widht": 20])).contains("view: no param 'widht' (params: format, watch, width; did you mean 'width'?)"))
        #expect(message(client.call("evl", ["code": "1"])).contains("no method 'evl' (methods: hello, eval,"))
        #expect(message(client.call("evl", ["code": "1"])).hasSuffix("; did you mean 'eval'?)"))
        // Right names still work.
        #expect(try host.answersEval() == 2)
        _ = await host.stop()
    }

    /// D13: the warning for `on("locator.didUpdate")` proposed `on("location.didUpdate")`, which
    /// raises; it names the event the service has.
    @Test func aNearServicePrefixProposesARealEvent() async throws {
        let result = try await crescent(["-e", "on('locator.didUpdate', print) print(1)"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("no service is named 'locator'; did you mean 'location' (on(\"location.didUpdateLocations\", handler))?"),
                "\(result)")
    }

    /// D14: a mistyped golden path sent the user to `--update`, which then failed on the missing
    /// folder (or, had it been there, wrote a second golden file under the typo).
    @Test func aMissingGoldenFileNamesWhereItWasReadAndTheNearFile() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/golden/main.txt", "x\n")
        try sandbox.write("spec/o_spec.lua", """
            it("view", function()
              local C = controller("C")
              function C:loadView() return view.text { text = "x" } end
              app.push(C)
              assert.view("golden/mian.txt")
            end)
            """)
        let result = try await crescent(["test", "spec/o_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("the golden file golden/mian.txt does not exist, nor its folder golden (golden paths are read from the "
                                       + "folder crescent test runs in ("), "\(result)")
        #expect(result.stdout.contains("did you mean 'spec/golden/main.txt'?); correct the path, or create the folder"), "\(result)")
        let update = try await crescent(["test", "--update", "spec/o_spec.lua"], in: sandbox)
        #expect(update.status == 1, "\(update)")
        #expect(update.stdout.contains("cannot write golden/mian.txt") && update.stdout.contains("(its folder golden does not exist: create it, "
                                                                                                 + "or correct the path)"), "\(update)")
        #expect(update.stdout.contains("did you mean 'spec/golden/main.txt'?"), "\(update)")
    }
    /// D8: the change table an observer gets read a misspelled field (`change.intial`) as nil.
    @Test func aMisspelledFieldOfAChangeTableIsNamed() async throws {
        let result = try await runScript("""
            local c = services.store:collection("x")
            observe(c, "count", function(n, o, change)
              print(change.initial, change.key, pcall(function() return change.intial end))
              print(tostring(change):sub(1, 9))
            end)
            """, options: ["--data-dir", ":memory:"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("true\tcount\tfalse\tscript.lua:3: no field 'intial' on change (fields: coalesced, initial, key, object, sub; "
                                       + "did you mean 'initial'?)"), "\(result)")
        #expect(result.stdout.contains("change { "), "\(result)")
    }

    /// D9: a `fake.service` handle read a misspelled field (`h.cals`) as nil, where the other
    /// fakes' handles name it.
    @Test func aMisspelledFieldOfAFakeServiceHandleIsNamed() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/h_spec.lua", """
            it("handle", function()
              local s = fake.service("location", {})
              assert.same({}, s.calls)
              local _ = s.cals
            end)
            """)
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/h_spec.lua:4: no field 'cals' on the fake.service handle (fields: calls, name; methods: emit, set; "
                                       + "did you mean 'calls'?)"), "\(result)")
    }

    /// D12: `post("http.done")` called `http.done` an event of http, which has none.
    @Test func postingUnderAServicesPrefixSaysThePrefixIsTheServices() async throws {
        let result = try await runScript("""
            print(select(2, pcall(post, "http.done", {})))
            print(select(2, pcall(post, "location.didFail", {})))
            """)
        #expect(result.stdoutLines.first?.contains("bad argument #1 to 'post' ('http.' is the prefix of the http service's events (events: none), "
                                                   + "which only the service posts, so the script's own names must not start with it; ") == true,
                "\(result)")
        #expect(result.stdoutLines.last?.contains("'location.didFail' is an event of the location service, which only the service posts") == true,
                "\(result)")
    }

    /// D15: a run that found no spec file did not name the files it passed over, nor `tests/`.
    @Test func noSpecFilesNamesTheNearMisses() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/foo_test.lua", "it('a', function() end)\n")
        try sandbox.write("spec/Foo_Spec.lua", "it('b', function() end)\n")
        try sandbox.write("tests/bar_spec.lua", "it('c', function() end)\n")
        let result = try await crescent(["test"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("no *_spec.lua files in spec/ or test/; passed over: spec/Foo_Spec.lua, spec/foo_test.lua (a spec file's name "
                                       + "ends in _spec.lua, in lower case, as busted finds them); tests/ holds 1 spec file: run crescent test tests"),
                "\(result)")
    }
    /// D10: `:` for `.` on the global modules logged the module (`log:info`), blamed the data
    /// (`json:encode`) or said only "number expected, got table".
    @Test func aModuleCalledWithAColonSaysToUseADot() async throws {
        let result = try await runScript("""
            for _, f in ipairs({
              function() log:info("hello") end,
              function() json:encode({}) end,
              function() json:decode("[1]") end,
              function() timer:after(1, function() end) end,
              function() app:push(1) end,
              function() app:exit(0) end,
            }) do print((select(2, pcall(f)))) end
            log.info("still logs")
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == [
            "script.lua:2: log.info: call it with '.', as log.info(...), not ':'",
            "script.lua:3: json.encode: call it with '.', as json.encode(value), not ':'",
            "script.lua:4: json.decode: call it with '.', as json.decode(text), not ':'",
            "script.lua:5: bad argument #1 to 'timer.after' (number expected, got table: call it with '.', as timer.after(...), not ':')",
            "script.lua:6: app.push: call it with '.', as app.push(Controller), not ':'",
            "script.lua:7: bad argument #1 to 'app.exit' (number expected, got table: call it with '.', as app.exit(...), not ':')",
        ], "\(result)")
        #expect(result.stderr.contains("info: script.lua:9:") && result.stderr.contains("still logs"), "\(result)")
    }
    /// D11: "one too many" named the completion's place when the extra came after it, and
    /// `location:start({}, 5)` took the 5 without a word.
    @Test func theArgumentOneTooManyIsTheOneAfterTheCompletion() async throws {
        let result = try await runScript("""
            local c = services.store:collection("x")
            print((select(2, pcall(function() c:add({ a = 1 }, function() end, 5) end))))
            print((select(2, pcall(function() services.location:start({}, 5) end))))
            print((select(2, pcall(function() services.location:stop(1) end))))
            """, options: ["--data-dir", ":memory:", "--location", "fixed:1,2"])
        #expect(result.stdoutLines.count == 3, "\(result)")
        #expect(result.stdoutLines.first?.hasSuffix(": argument #3 is one too many (it takes records and a completion)") == true, "\(result)")
        #expect(result.stdoutLines.dropFirst().first == "script.lua:3: location:start([options]): argument #2 is one too many (it takes 0 or 1 argument)",
                "\(result)")
        #expect(result.stdoutLines.last == "script.lua:4: location:stop(): argument #1 is one too many (it takes none)", "\(result)")
    }
    /// D7: `.load FILE` in `crescent attach` said no file was given; it is the local REPL's only.
    @Test func loadInAnAttachedReplSaysItIsTheLocalOnes() async throws {
        let host = try await ListeningHost(script: RemoteControlTests.groceries, name: "named4load", options: ["--data-dir", "data"])
        let terminal = try await host.attach()
        terminal.type(".load one.lua\r")
        // The message is wider than the terminal: its first words, and the fix on a later row.
        await terminal.waitFor(line: "error: .load is the local REPL's only")
        await terminal.waitFor("the fix dofile(\"one.lua\")") { $0.contains { $0.contains("dofile(\"one.lua\")") } }
        terminal.type("\u{4}")
        #expect(await terminal.finish() == 0)
        _ = await host.stop()
    }
}
