import Foundation
import Testing

/// What the attack on issue 39 ("every mistake is named") found still silent, misplaced or
/// misleading: each test is one of its defects, run through the `crescent` binary.
@Suite struct HardeningNamedMistakesTests {
    /// A one-line expression sent by `crescent eval` (the REPL compiles it the same way) named
    /// line 2 (`remote:2:`): the wrapping that keeps the chunk's frame put its `)` on a line of
    /// its own, and Lua emits the last argument's code there. lua5.4 says line 1.
    @Test func aOneLineExpressionsErrorNamesLineOne() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("idle.lua", "timer.every(60, function() end)\n")
        let host = try await ListeningHost(script: "idle.lua", name: "idle", sandbox: sandbox)
        let failure = try await host.crescentCommand(["eval", "idle", "string.nope.field"])
        #expect(failure.status == 1, "\(failure)")
        #expect(failure.stderr.contains("remote:1: attempt to index a nil value (field 'nope')"), "\(failure)")
        #expect(failure.stderr.contains("remote:1: in main chunk"), "\(failure)")
        #expect(!failure.stderr.contains("remote:2"), "\(failure)")
        // An expression ending in a comment still gives its value, and its errors their line.
        let commented = try await host.crescentCommand(["eval", "idle", "40 + 2 -- the answer"])
        #expect(commented.status == 0 && commented.stdout.contains("42"), "\(commented)")
        let twoLines = try await host.crescentCommand(["eval", "idle", "1,\nstring.nope.field -- a comment"])
        #expect(twoLines.stderr.contains("remote:2: attempt to index a nil value (field 'nope')"), "\(twoLines)")
        _ = await host.stop()
    }

    /// A warning the chunk causes (a misspelled lifecycle step, found as the controller is
    /// pushed) reached only the host's stderr: the client that sent the chunk hears it too.
    @Test func aWarningCausedByAnEvalReachesTheClient() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("idle.lua", "timer.every(60, function() end)\n")
        let host = try await ListeningHost(script: "idle.lua", name: "idle", options: ["--ui", "plain"], sandbox: sandbox)
        let result = try await host.crescentCommand(["eval", "idle", "local V = controller('Q') function V:loadVeiw() end app.push(V)"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("Q:loadVeiw is not a lifecycle step"), "\(result)")
        #expect(!result.stdout.contains("lifecycle step"), "on the client's stderr, not its stdout: \(result)")
        _ = await host.stop()
    }

    /// A controller whose commands come on piped stdin: an unknown command, a bad argument and a
    /// word too many printed their error and the run exited 0; `crescent send` exits 1 for each.
    @Test func aPipedCommandThatIsAnErrorMakesTheRunExitOne() async throws {
        let script = """
            local V = controller("V")
            function V:loadView() return view.text { text = "hi" } end
            function V:viewDidLoad() self:command("add", "add", "add an item", { args = { "name: string", "qty: integer?" } }) end
            function V:add(name, qty) print("added", name, qty) end
            app.push(V)
            """
        for line in ["ad milk", "add milk two", "add oat milk 2"] {
            let result = try await runScript(script, stdinText: line + "\n", options: ["--ui", "plain"])
            #expect(result.status == 1, "\(line): \(result)")
            #expect(!result.stderr.isEmpty, "\(line): \(result)")
        }
        let fine = try await runScript(script, stdinText: "add milk 2\n", options: ["--ui", "plain"])
        #expect(fine.status == 0 && fine.stdout.contains("added\tmilk\t2"), "\(fine)")
    }

    /// `crescent test --timeout -1` said "Missing value" (the parser took -1 for an option).
    @Test func aNegativeTimeoutSaysWhatTheValueMustBe() async throws {
        let result = try await crescent(["test", "--timeout", "-1"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("--timeout must be a number of seconds >= 0 (0 for no limit), got -1"), "\(result)")
        #expect(!result.stderr.contains("Missing value"), "\(result)")
    }

    /// Root options before `plugin check` were refused ("Unknown option '--data-dir'") while the
    /// usage shown listed them; `plugins` and `services` take them there.
    @Test func rootOptionsBeforePluginCheckAreTaken() async throws {
        let sandbox = try Self.greetPlugin()
        let result = try await crescent(["--data-dir", ":memory:", "plugin", "check", "plugins/greet"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(!result.stderr.contains("Unknown option"), "\(result)")
    }

    /// `crescent plugins --help` listed only --help and --version, though `plugins` alone is
    /// `plugins list` and takes its options.
    @Test func pluginsHelpListsTheOptionsItTakes() async throws {
        for words in [["plugins", "--help"], ["help", "plugins"]] {
            let result = try await crescent(words)
            #expect(result.status == 0, "\(words): \(result)")
            for option in ["--data-dir", "--config", "--no-plugins", "--plugin"] {
                #expect(result.stdout.contains(option), "\(words) lists \(option): \(result)")
            }
            #expect(result.stdout.contains("allow") && result.stdout.contains("install"), "the subcommands stay: \(result)")
        }
    }

    /// `typ = "number"` in a manifest's `[settings.radius]` was reported as a bad `type`.
    @Test func aMisspelledKeyOfAManifestSettingIsNamed() async throws {
        let sandbox = try Self.greetPlugin(extraManifest: "\n[settings.radius]\ntyp = \"number\"\ndefault = 5\n")
        let result = try await crescent(["plugin", "check", "plugins/greet"], in: sandbox)
        #expect(result.status != 0, "\(result)")
        let output = result.stdout + result.stderr
        #expect(output.contains("field 'settings.radius.typ' is not a field of a setting (fields: type, default, doc; did you mean 'type'?)"), "\(result)")
        #expect(!output.contains("settings.radius.type"), "\(result)")
    }

    /// `[store` said "found 'U+A'"; `[plugins] call_timeout = "ten"` was a warning that used 10,
    /// where a setting of the wrong type is an error naming its type.
    @Test func configMistakesAreNamedInWords() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", "print('ran')\n")
        try sandbox.write("crescent.toml", "[store\n")
        let header = try await crescent(["script.lua"], in: sandbox)
        #expect(header.status != 0, "\(header)")
        #expect(header.stderr.contains("crescent.toml:1: expected ']' after the table name store, found the end of the line"), "\(header)")
        try sandbox.write("crescent.toml", "[plugins]\ncall_timeout = \"ten\"\n")
        let timeout = try await crescent(["script.lua"], in: sandbox)
        #expect(timeout.status != 0 && !timeout.stdout.contains("ran"), "\(timeout)")
        #expect(timeout.stderr.contains("crescent.toml:2: [plugins] call_timeout must be a number of seconds above 0, got \"ten\""), "\(timeout)")
    }

    /// A repeating timer whose callback always fails was never stopped (a traceback a second for
    /// as long as the run lasted); it is cancelled after 10 failures in a row, as an `on`
    /// handler is, and the run ends.
    @Test func aTimerThatAlwaysFailsIsCancelled() async throws {
        let result = try await runScript("timer.every(0.01, function(t) t:cancle() end)\n", timeLimit: 20)
        #expect(!result.timedOut, "\(result)")
        #expect(result.status == 1, "\(result)")
        let failures = result.stderrLines.filter { $0.contains("error in timer callback") }
        #expect(failures.count == 10, "\(result)")
        #expect(result.stderr.contains("warning: cancelled the timer (every 0.01 s) made at script.lua:1 after 10 consecutive errors"), "\(result)")
        // One that fails now and then is not cancelled.
        let flaky = try await runScript("""
            local n = 0
            timer.every(0.01, function(t)
              n = n + 1
              if n == 30 then t:cancel() print("ran", n) return end
              if n % 5 ~= 0 then error("flaky " .. n) end
            end)
            """, timeLimit: 20)
        #expect(flaky.stdout.contains("ran\t30"), "\(flaky)")
        #expect(!flaky.stderr.contains("cancelled the timer"), "\(flaky)")
    }

    /// A mistake in a plugin's main.lua and in a spec showed the host's frames
    /// (`[crescent plugin]:322: in upvalue 'forward'`, `[crescent testing]:58`) before the
    /// user's; they are folded after it, as a script's are.
    @Test func hostFramesAreFoldedAfterThePluginsAndTheSpecsLine() async throws {
        let sandbox = try Self.greetPlugin(main: """
            local s = service("greet", "says hi")
            s:emit("didHi", { name = "x" })
            """)
        try sandbox.write("script.lua", "print(services.greet)\n")
        let plugin = try await crescent(["script.lua"], in: sandbox)
        let lines = plugin.stderrLines
        let header = try #require(lines.firstIndex(of: "stack traceback:"), "\(plugin)")
        #expect(lines.dropFirst(header + 1).first == "\t./plugins/greet/main.lua:2: in main chunk", "\(plugin)")
        #expect(!plugin.stderr.contains("[crescent plugin]:"), "\(plugin)")
        #expect(plugin.stderr.contains("host frame"), "\(plugin)")

        try sandbox.write("spec/x_spec.lua", "describe(\"d\", 5)\n")
        let spec = try await crescent(["test", "spec/x_spec.lua"], in: sandbox)
        #expect(spec.status == 1, "\(spec)")
        let specLines = spec.stdoutLines.map { $0.trimmingCharacters(in: .whitespaces) }
        let specHeader = try #require(specLines.firstIndex(of: "stack traceback:"), "\(spec)")
        #expect(specLines.dropFirst(specHeader + 1).first == "spec/x_spec.lua:1: in main chunk", "\(spec)")
        #expect(!spec.stdout.contains("[crescent testing]:") && !spec.stdout.contains("[C]: in function 'error'"), "\(spec)")
    }

    /// `on("greet.didHey", f)` for a plugin not started yet was silent (its events are declared
    /// as it starts); listening starts it and the name is checked, as for a builtin service.
    @Test func aMisspelledEventOfAPluginThatHasNotStartedIsNamed() async throws {
        let sandbox = try Self.greetPlugin()
        try sandbox.write("script.lua", "on(\"greet.didHey\", function() end)\n")
        let wrong = try await crescent(["script.lua"], in: sandbox)
        #expect(wrong.status == 1, "\(wrong)")
        #expect(wrong.stderr.contains("script.lua:1: "), "\(wrong)")
        #expect(wrong.stderr.contains("'didHey' is not an event of greet (events: didHi; did you mean 'didHi'?)"), "\(wrong)")
        try sandbox.write("script.lua", "on(\"greet.didHi\", function() end) print('listening')\n")
        let right = try await crescent(["script.lua"], in: sandbox)
        #expect(right.status == 0 && right.stdout.contains("listening"), "\(right)")
    }

    /// `fake.service("geocodr", {})` (one letter from `geocoder`) and `fake.process{…}.cals`
    /// passed silently; the other fakes name the closest right name.
    @Test func misspelledFakesAreNamed() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("spec/fakes_spec.lua", """
            describe("fakes", function()
              it("service", function() fake.service("geocodr", {}) end)
              it("own service", function() fake.service("weather", {}) end)
              it("process", function() local f = fake.process { ["*"] = "out" } print(f.cals) end)
              it("process calls", function() local f = fake.process { ["*"] = "out" } assert.same({}, f.calls) end)
            end)
            """)
        let result = try await crescent(["test", "spec/fakes_spec.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("spec/fakes_spec.lua:2: fake.service: no service is named 'geocodr' ("), "\(result)")
        #expect(result.stdout.contains("did you mean 'geocoder'?)"), "\(result)")
        #expect(result.stdout.contains("spec/fakes_spec.lua:4: no field 'cals' on the fake.process handle (fields: calls; did you mean 'calls'?)"), "\(result)")
        #expect(result.stdoutLines.last == "2 passed, 2 failed", "\(result)")
    }

    /// `s:mehtod(...)` on a Lua plugin's own service object was Lua's bare "attempt to call a nil
    /// value (method 'mehtod')"; it names the object's methods and the closest one.
    @Test func aMisspelledMethodOfAPluginsServiceObjectIsNamed() async throws {
        let sandbox = try Self.greetPlugin(main: """
            local s = service("greet", "says hi")
            s:property("level", "integer", "how loud", 1)
            s:mehtod("hi", {}, "string", "hi", function() return "hi" end)
            """)
        let result = try await crescent(["plugin", "check", "plugins/greet"], in: sandbox)
        #expect(result.status != 0, "\(result)")
        let output = result.stdout + result.stderr
        #expect(output.contains("main.lua:3: no method or property 'mehtod' on service greet (properties: level; "
                                + "methods: property, method, event, set, emit; did you mean 'method'?)"), "\(result)")
    }

    /// A sandbox with `plugins/greet`, a Lua plugin declaring the service greet with the event
    /// `didHi` (or running `main`), its manifest ending in `extraManifest`, its `main` field
    /// named `mainField` (a misspelling, to test the manifest's check).
    static func greetPlugin(main: String? = nil, extraManifest: String = "", mainField: String = "main") throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/greet/plugin.toml", """
            name = "greet"
            version = "1.0.0"
            crescent = ">=0.1.0"
            description = "says hi"
            kind = "lua"
            \(mainField) = "main.lua"
            services = ["greet"]
            """ + extraManifest)
        try sandbox.write("plugins/greet/main.lua", main ?? """
            local s = service("greet", "says hi")
            s:event("didHi", "{ name }", "someone said hi")
            s:method("hi", {}, "string", "says hi", function() return "hi" end)
            """)
        return sandbox
    }
}
