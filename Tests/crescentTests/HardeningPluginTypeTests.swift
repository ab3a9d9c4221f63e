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
              meter:set("level", nil)
              meter:set("label", nil)
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
        #expect(result.stderr.contains("plugin 'meter': set 'meter.level' to nil, which is not its type integer; dropped"), "\(result)")
        #expect(!result.stderr.contains("meter.label"), "an optional property takes nil: \(result)")
        #expect(result.stdout.contains("the initial value of property 'level' is string, not its type integer"), "\(result)")
        #expect(result.stdout.contains("property 'level' is declared integer, which never reads nil"), "\(result)")
    }

    /// Declares `level` with the initial value in `KID_LEVEL` (JSON); `daemon` starts a child in
    /// a session of its own and answers its pid.
    static let program = #"""
        import json, os, subprocess, sys

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
                child = subprocess.Popen(["sleep", "300"], start_new_session=True)
                send({"jsonrpc": "2.0", "id": id, "result": child.pid})
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
