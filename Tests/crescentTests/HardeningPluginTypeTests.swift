import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Plugins, attacked again (issue 32, the last round's open findings): nil and initial values
/// against the declared types, and a child that leaves the plugin's process group.
@Suite struct HardeningPluginTypeTests {
    @Test func aLuaPluginsInitialValuesAndNilAreCheckedAgainstTheDeclaredTypes() async throws {
        let sandbox = try luaPluginSandbox("meter", main: """
            local meter = service("meter", "Counts.")
            meter:property("level", "integer", "The level.", 0)
            meter:property("label", "string?", "A label.")
            meter:method("clear", {}, "nil", "Sets nil.", function()
              meter:set("label", nil)
              meter:set("level", nil)
            end)
            """)
        _ = try luaPluginSandbox("wrong", main: """
            local wrong = service("wrong", "Starts wrong.")
            wrong:property("level", "integer", "The level.", "high")
            """, in: sandbox)
        _ = try luaPluginSandbox("unset", main: """
            local unset = service("unset", "Never set.")
            unset:property("level", "integer", "The level.")
            """, in: sandbox)
        let result = try await crescent(["-e", """
            task(function()
              services.meter:clear()
              print("level", services.meter.level)
            end)
            print(pcall(function() return services.wrong end))
            print(pcall(function() return services.unset end))
            """], in: sandbox)
        #expect(result.stdoutLines.contains("level\t0"), "\(result)")
        // The error names the plugin's line that set it.
        #expect(result.stderr.contains("plugin 'meter': error in meter.clear: plugins/meter/main.lua:6: meter:set('level', ...): the value is nil, "
                                       + "which is not the type of property 'level' (integer)"), "\(result)")
        #expect(!result.stderr.contains("meter.label"), "an optional property takes nil: \(result)")
        #expect(result.stdout.contains("the initial value of property 'level' is string, not its type integer"), "\(result)")
        #expect(result.stdout.contains("property 'level' is declared integer, which never reads nil"), "\(result)")
    }

    /// Declares `level` with the initial value in `KID_LEVEL` (JSON); `daemon` starts a child in
    /// a session of its own and answers its pid.
    static let program = #"""
        import json, os, subprocess, sys
        \#(PluginTestPython.hostPids)

        def send(message):
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

        level = json.loads(os.environ.get("KID_LEVEL", "0"))
        for line in sys.stdin:
            message = json.loads(line)
            method_name, id, params = message.get("method"), message.get("id"), message.get("params") or {}
            if method_name == "shutdown":
                break
            if id is None:
                continue
            if method_name == "initialize":
                send({"jsonrpc": "2.0", "id": id, "result": {"services": [{"name": "kid", "summary": "x",
                    "properties": [{"name": "level", "type": "number", "doc": "A level.", "value": level}],
                    "methods": [{"name": "daemon", "args": [], "returns": "integer"}], "events": []}]}})
                continue
            if params.get("method") == "daemon":
                child, child_pid = spawn_seen(["sleep", "300"], start_new_session=True)
                send({"jsonrpc": "2.0", "id": id, "result": child_pid})
        """#

    /// The kid plugin, granted what it uses (it reads KID_LEVEL and runs `sleep`) in the
    /// sandbox's HOME: run it with ``inHome``.
    private func processSandbox() async throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/kid/plugin.toml", PluginHardeningTests.processManifest + "\nenv = [\"KID_LEVEL\"]\n")
        try sandbox.write("plugins/kid/kid.py", Self.program)
        let granted = try await inHome(["plugins", "allow", "kid"], sandbox)
        #expect(granted.status == 0, "\(granted)")
        return sandbox
    }

    /// An argument type nested deeper than 16 arrays is refused, naming the method and the
    /// argument, in a Lua plugin's declaration and in a process plugin's `initialize` answer;
    /// 20,000 levels ran the host out of its stack (SIGSEGV) before.
    @Test func anArgumentTypeNestedWithoutEndIsRefusedNotACrash() async throws {
        let sandbox = try luaPluginSandbox("deep", main: """
            local deep = service("deep", "Deep.")
            deep:method("m", { "a: " .. string.rep("{", 100000) .. "string" .. string.rep("}", 100000) }, "value", "d", function() end)
            """)
        try sandbox.write("plugins/pdeep/plugin.toml", """
            name = "pdeep"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["python3", "p.py"]
            services = ["pdeep"]
            """)
        try sandbox.write("plugins/pdeep/p.py", #"""
            import json, sys
            for line in sys.stdin:
                message = json.loads(line)
                if message.get("method") == "initialize":
                    kind = "{" * 100000 + "string" + "}" * 100000
                    method = {"name": "m", "args": [{"name": "a", "type": kind}], "returns": "value"}
                    print(json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                      "result": {"services": [{"name": "pdeep", "summary": "Deep.", "methods": [method]}]}}), flush=True)
            """#)
        let result = try await crescent(["-e", """
            print(pcall(function() return services.deep end))
            task(function() print(pcall(function() return services.pdeep end)) end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.stdout.contains("argument #1 'a': its type nests {…} 100000 levels deep, more than the 16 a type may"), "\(result)")
        #expect(result.stdout.contains("method 'm' of 'pdeep', argument 1: its type nests {…} 100000 levels deep"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    /// A task that starts itself from inside itself without end stops with Lua's "C stack
    /// overflow", in a script and in a Lua plugin, and the run goes on; it ran the host out of its
    /// C stack (SIGSEGV) before.
    @Test func aTaskStartingItselfWithoutEndIsAnErrorNotACrash() async throws {
        let sandbox = try luaPluginSandbox("spawner", main: """
            local spawner = service("spawner", "Starts tasks.")
            spawner:method("go", {}, "string", "Starts itself.", function()
              local function f() task(f) end
              f()
              return "plugin survived"
            end)
            """)
        let result = try await crescent(["-e", """
            local function f() task(f) end
            f()
            print("script survived")
            task(function() print(services.spawner:go()) end)
            """], in: sandbox, timeLimit: 60)
        #expect(result.stdoutLines.contains("script survived"), "\(result)")
        #expect(result.stdoutLines.contains { $0.hasPrefix("plugin survived") }, "\(result)")
        #expect(result.stderr.contains("C stack overflow"), "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }

    @Test func aProcessPluginsInitialValuesAreCheckedAgainstTheDeclaredTypes() async throws {
        let sandbox = try await processSandbox()
        for (given, problem) in [("\"high\"", "the initial value of property 'level' is string, not its type number"),
                                 ("null", "property 'level' is declared number, which never reads nil")] {
            let run = try await inHome(["-e", "print(pcall(function() return services.kid.level end))"], sandbox,
                                       environment: ["KID_LEVEL": given])
            #expect(run.stdout.contains("services[1].properties[1]: \(problem)") || run.stderr.contains("services[1].properties[1]: \(problem)"),
                    "\(given): \(run)")
        }
        let fine = try await inHome(["-e", "print(services.kid.level)"], sandbox, environment: ["KID_LEVEL": "2.5"])
        #expect(fine.stdoutLines == ["2.5"], "\(fine)")
    }

    /// A child that calls setsid leaves the plugin's process group; it is killed with the
    /// plugin all the same.
    @Test func aProcessPluginsChildInASessionOfItsOwnEndsWithTheHost() async throws {
        let sandbox = try await processSandbox()
        let run = try await inHome(["-e", "task(function() print('child', (services.kid:daemon())) end)"], sandbox)
        #expect(run.status == 0, "\(run)")
        let line = run.stdoutLines.first { $0.hasPrefix("child\t") }
        let pid = try #require(line.flatMap { Int32($0.dropFirst("child\t".count)) }, "\(run)")
        defer { if ProcessPluginTests.isAlive(pid) { kill(pid, SIGKILL) } }
        var gone = false
        for _ in 0..<100 where !gone {
            gone = !ProcessPluginTests.isAlive(pid)
            if !gone { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(gone, "the plugin's child \(pid), in a session of its own, outlived the host")
    }
}
