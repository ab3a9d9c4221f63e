import Foundation
import Testing

/// Lua plugins end to end through the `crescent` binary: a plugin folder in `plugins/` of the
/// current folder, its services used by a script like the builtin ones.
@Suite struct LuaPluginTests {
    static let manifest = """
        name = "greeter"
        version = "1.0.0"
        crescent = ">=0.1.0, <1.0.0"
        description = "Greets people."
        kind = "lua"
        main = "main.lua"
        services = ["greeter"]
        requires = ["location"]

        [settings.greeting]
        type = "string"
        default = "hello"
        doc = "What to say."
        """

    static let main = """
        local greeter = service("greeter", "Greets people.")
        local count = 0
        greeter:property("count", "integer", "Greetings so far.", 0)
        greeter:event("didGreet", "{ name }", "Someone was greeted.")
        greeter:method("greet", { "name: string" }, "string", "Greets name.", function(name)
          if name == "" then error(service_error("invalid_argument", "name is empty")) end
          sleep(0.01)                                   -- a method is a task: it may wait
          count = count + 1
          greeter:set("count", count)
          greeter:emit("didGreet", { name = name })
          return settings.greeting .. " " .. name
        end)
        greeter:method("boom", {}, "nil", "Raises a plain error.", function() error("it broke") end)
        greeter:method("leak", {}, "table", "Returns a function.", function() return { nested = { f = print } } end)
        greeter:method("peek", {}, "table", "What the plugin can see.", function()
          return { secret = tostring(secret), app = type(app), view = type(view), controller = type(controller),
                   http = pcall(function() return services.http end), location = services.location ~= nil }
        end)
        greeter:method("spin", {}, "nil", "Never yields.", function() while true do end end)
        greeter:method("wait", {}, "nil", "Waits long.", function() sleep(100) end)
        """

    func sandbox(manifest: String = LuaPluginTests.manifest, main: String = LuaPluginTests.main) throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/greeter/plugin.toml", manifest)
        try sandbox.write("plugins/greeter/main.lua", main)
        return sandbox
    }

    @Test func awaitCompletionObserveOnAndDelegate() async throws {
        let sandbox = try self.sandbox()
        try sandbox.write("script.lua", """
            local greeter = services.greeter
            observe(greeter, "count", function(new) print("count", new) end, { initial = false })
            on("greeter.didGreet", function(payload) print("on", payload.name) end)
            local delegate = {}
            function delegate:didGreet(payload) print("delegate", payload.name) end
            greeter:addObserver(delegate)
            local sync = true
            greeter:greet("ada", function(text, err) print("completion", text, err, sync) end)
            sync = false
            task(function()
              print("await", greeter:greet("bob"))
              local _, err = greeter:greet("")
              print("error", err.code, err.message, err.service, err.method)
            end)
            """)
        let result = try await crescent(["script.lua"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.contains("completion\thello ada\tnil\tfalse"), "\(result)")
        #expect(lines.contains("await\thello bob\tnil"), "\(result)")
        #expect(lines.contains("on\tada") && lines.contains("on\tbob"), "\(result)")
        #expect(lines.contains("delegate\tada") && lines.contains("delegate\tbob"), "\(result)")
        #expect(lines.contains("count\t2"), "\(result)")
        #expect(lines.contains("error\tinvalid_argument\tname is empty\tgreeter\tgreet"), "\(result)")
    }

    @Test func settingsComeFromTheConfigFileWithDefaults() async throws {
        let sandbox = try self.sandbox()
        try sandbox.write("crescent.toml", "[greeter]\ngreeting = \"salut\"\n")
        let result = try await crescent(["-e", "task(function() print(services.greeter:greet('ada')) end)"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "salut ada\tnil\n", "\(result)")

        try sandbox.write("crescent.toml", "[greeter]\ngreeting = 3\nvolume = 2\n")
        let wrong = try await crescent(["-e", "print(pcall(function() return services.greeter end))"], in: sandbox)
        #expect(wrong.stderrLines.contains { $0.hasPrefix("crescent: error: crescent.toml:2: [greeter] greeting must be string, got number") }, "\(wrong)")
        #expect(wrong.stderrLines.contains { $0.hasPrefix("crescent: warning: crescent.toml:3: unknown key 'volume' in [greeter]") }, "\(wrong)")
        #expect(wrong.stdout.hasPrefix("false"), "\(wrong)")
    }

    @Test func thePluginSeesOnlyItsOwnGlobalsAndTheServicesItRequires() async throws {
        let sandbox = try self.sandbox()
        let result = try await crescent(["-e", """
            secret = "script's"
            task(function()
              local seen = services.greeter:peek()
              print(seen.secret, seen.app, seen.view, seen.controller, seen.http, seen.location)
            end)
            """], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "nil\tnil\tnil\tnil\tfalse\ttrue\n", "\(result)")
    }

    @Test func errorsInMethodsAndValuesThatCannotCrossAnswerInternal() async throws {
        let sandbox = try self.sandbox()
        let result = try await crescent(["-e", """
            task(function()
              local _, err = services.greeter:boom()
              print(err.code, err.message)
              _, err = services.greeter:leak()
              print(err.code, err.message)
            end)
            """], in: sandbox)
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutLines
        #expect(lines.first?.hasPrefix("internal\tplugin 'greeter': ") == true && lines.first?.contains("main.lua:13: it broke") == true, "\(result)")
        #expect(lines.dropFirst().first?.hasPrefix("internal\tplugin 'greeter': greeter.leak returned a function at .nested.f") == true, "\(result)")
        #expect(result.stderr.contains("plugin 'greeter': error in greeter.boom:"), "\(result)")
        #expect(result.stderr.contains("stack traceback"), "\(result)")
    }

    @Test func callsPastTheTimeLimitAnswerTimeout() async throws {
        let sandbox = try self.sandbox()
        try sandbox.write("crescent.toml", "[plugins]\ncall_timeout = 0.5\n")
        let result = try await crescent(["-e", """
            task(function()
              local _, err = services.greeter:spin()
              print("spin", err.code)
              _, err = services.greeter:wait()
              print("wait", err.code)
              print("after", services.greeter:greet("ada"))
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["spin\ttimeout", "wait\ttimeout", "after\thello ada\tnil"], "\(result)")
    }

    @Test func theRunsTimeLimitStopsPluginCodeThatNeverYields() async throws {
        let sandbox = try self.sandbox()
        let result = try await crescent(["--timeout", "1", "-e", "task(function() services.greeter:spin() end)"], in: sandbox, timeLimit: 60)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("(--timeout)"), "\(result)")
        #expect(result.elapsed < 20, "\(result)")
    }

    /// Ctrl-C in the REPL reaches a plugin method that holds the loop: the method answers
    /// `cancelled`, the chunk is interrupted, and the plugin serves the next call.
    @Test func controlCInTheReplInterruptsAPluginMethodAndThePluginRunsOn() async throws {
        let sandbox = try self.sandbox()
        // A time limit far past the test's waits: only Ctrl-C can end the spin in time.
        try sandbox.write("crescent.toml", "[plugins]\ncall_timeout = 600\n")
        let repl = try InteractiveTerminal(["--data-dir", sandbox.path + "/data"], directory: sandbox.path,
                                           environment: ["CRESCENT_HISTORY": sandbox.path + "/history"])
        await repl.waitFor("the first prompt") { $0.last == ">" }
        repl.type("services.greeter:spin()\r")
        try await Task.sleep(for: .milliseconds(300))
        repl.type("\u{3}")
        await repl.waitFor(line: "interrupted")
        await repl.waitFor("the prompt back") { $0.last == ">" }
        repl.type("services.greeter:greet(\"ada\")\r")
        await repl.waitFor(line: "\"hello ada\"")
        repl.type("\u{4}")
        #expect(await repl.finish() == 0)
        #expect(repl.screen.transcript.contains { $0.contains("\"hello ada\"") }, "\(repl.screen.transcript)")
    }

    @Test func eachPluginVMHasItsOwnMemoryLimit() async throws {
        let sandbox = try self.sandbox(main: Self.main + """

            greeter:method("grow", {}, "nil", "Allocates without end.", function()
              local t = {}
              for i = 1, 1e8 do t[i] = ("x"):rep(64) .. i end
            end)
            """)
        try sandbox.write("crescent.toml", "[plugins]\nmemory_limit = 8\n")
        let result = try await crescent(["-e", """
            task(function()
              local _, err = services.greeter:grow()
              print(err.code, err.message)
              print(services.greeter:greet("ada"))
            end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["internal\tplugin 'greeter': greeter.grow ran out of memory: the plugin's VM may use 8 MiB ([plugins] memory_limit)",
                                       "hello ada\tnil"], "\(result)")
    }

    @Test func cancellingTheRequestCancelsThePluginTask() async throws {
        let sandbox = try self.sandbox(main: Self.main + """

            greeter:method("slow", {}, "nil", "Waits, then writes.", function()
              sleep(0.3)
              print("slow finished")
            end)
            """)
        let result = try await crescent(["-e", """
            local request = services.greeter:slow(function(_, err) print("completion", err.code) end)
            request:cancel()
            timer.after(0.8, function() print("done") end)
            """], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["completion\tcancelled", "done"], "\(result)")
    }

    /// Each call's reply, request and task are let go once answered: the host's memory stays
    /// flat over many calls (it grew by about 1 KiB a call while a call and its reply held each other).
    @Test func answeredCallsLeaveNothingBehind() async throws {
        let sandbox = try self.sandbox(main: Self.main + """

            greeter:method("echo", { "value: value" }, "value", "Answers its argument.", function(value) return value end)
            """)
        let result = try await crescent(["-e", """
            local function rss()
              local f = io.open("/proc/self/status") local s = f:read("a") f:close()
              return tonumber(s:match("VmRSS:%s*(%d+)"))
            end
            task(function()
              local greeter, total = services.greeter, 0
              for i = 1, 2000 do total = total + greeter:echo(i) end
              collectgarbage()
              local before = rss()
              for i = 1, 30000 do total = total + greeter:echo(i) end
              collectgarbage()
              print(total, rss() - before)
            end)
            """], in: sandbox, timeLimit: 90)   // 32,000 calls of a debug build: 6 s alone, past 20 s beside make test's other phases
        #expect(result.status == 0, "\(result)")
        let fields = result.stdoutLines.first?.split(separator: "\t") ?? []
        let total: Int = 2000 * 2001 / 2 + 30000 * 30001 / 2
        #expect(fields.first.map(String.init) == String(total), "\(result)")
        let grewKiB = fields.count == 2 ? Int(fields[1]) : nil
        #expect(grewKiB.map { $0 < 8 * 1024 } == true, "the host grew by \(grewKiB.map(String.init) ?? "?") KiB over 30,000 calls")
    }

    @Test func aPluginThatRaisesWhileLoadingIsReportedAndTheRunGoesOn() async throws {
        let sandbox = try self.sandbox(main: "local x = nil\nx.field = 1\n")
        let result = try await crescent(["-e", """
            print(pcall(function() return services.greeter end))
            print(services.geocoder ~= nil)
            """], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrLines.filter { $0.contains("plugins/greeter/main.lua:2:") && $0.contains("skipped") }.count == 1, "\(result)")
        #expect(result.stdoutLines.first?.hasPrefix("false") == true, "\(result)")
        #expect(result.stdoutLines.dropFirst().first == "true", "\(result)")
    }

    @Test func aPluginThatDoesNotDeclareWhatItsManifestPromisesIsSkipped() async throws {
        let sandbox = try self.sandbox(main: "service('other', 'x')\n")
        let result = try await crescent(["-e", "print(pcall(function() return services.greeter end))"], in: sandbox)
        #expect(result.stderr.contains("did not declare service 'greeter'"), "\(result)")
        #expect(result.stdout.hasPrefix("false"), "\(result)")
    }

    @Test func anErrorInAPluginHandlerIsReportedAndFailsTheRun() async throws {
        let sandbox = try self.sandbox(main: Self.main + "\ntimer.after(0.05, function() error('handler broke') end)\n")
        let result = try await crescent(["-e", "print(services.greeter.count); timer.after(0.3, function() print('still running') end)"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "0\nstill running\n", "\(result)")
        #expect(result.stderr.contains("handler broke"), "\(result)")
    }

    @Test func aRunThatDoesNotTouchAPluginNeverLoadsIt() async throws {
        // The plugin marks its loading in its data folder, the one place it may write ungranted.
        let data = try Sandbox()
        let loaded = data.path + "/plugin-data/greeter/loaded"
        let sandbox = try self.sandbox(main: "local f = assert(io.open('\(loaded)', 'w')) f:write('yes') f:close()\n" + Self.main)
        let untouched = try await crescent(["--data-dir", data.path, "-e", "print(services.geocoder ~= nil)"], in: sandbox)
        #expect(untouched.status == 0, "\(untouched)")
        #expect(!FileManager.default.fileExists(atPath: loaded), "\(untouched)")
        let touched = try await crescent(["--data-dir", data.path, "-e", "print(services.greeter.count)"], in: sandbox)
        #expect(touched.stdout == "0\n", "\(touched)")
        #expect(FileManager.default.fileExists(atPath: loaded), "\(touched)")
    }

    @Test func pluginsBesideTheScriptAndGivenWithPluginAreFound() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app/plugins/greeter/plugin.toml", Self.manifest)
        try sandbox.write("app/plugins/greeter/main.lua", Self.main)
        try sandbox.write("app/script.lua", "print(services.greeter.count)\n")
        let beside = try await crescent(["app/script.lua"], in: sandbox)
        #expect(beside.status == 0 && beside.stdout == "0\n", "\(beside)")
        let given = try await crescent(["--plugin", "app/plugins/greeter", "-e", "print(services.greeter.count)"], in: sandbox)
        #expect(given.status == 0 && given.stdout == "0\n", "\(given)")
    }

    @Test func noPluginsKeepsOnlyTheBuiltins() async throws {
        let sandbox = try self.sandbox()
        let result = try await crescent(["--no-plugins", "-e", "print(pcall(function() return services.greeter end))"], in: sandbox)
        #expect(result.stdout.hasPrefix("false\t"), "\(result)")
        #expect(result.stdout.contains("no service 'greeter'"), "\(result)")
    }

    @Test func helpAndServicesDescribeThePluginsServices() async throws {
        let sandbox = try self.sandbox()
        let result = try await crescent(["-e", "print(help(services.greeter))"], in: sandbox)
        #expect(result.stdout.contains("greet(name, completion)"), "\(result)")
        #expect(result.stdout.contains("Greets name."), "\(result)")
        let listed = try await crescent(["services"], in: sandbox)
        #expect(listed.stdout.contains("greeter"), "\(listed)")
        let documented = try await crescent(["services", "greeter"], in: sandbox)
        #expect(documented.status == 0, "\(documented)")
        #expect(documented.stdout.contains("services.greeter:greet(name, completion)"), "\(documented)")
        #expect(documented.stdout.contains("didGreet"), "\(documented)")
    }
}
