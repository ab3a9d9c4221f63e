import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// DESIGN.md (Plugins › Permissions): a Lua plugin has no `debug`, no `os.exit`, no
/// `collectgarbage("stop")`; and a script's `os.exit` tears the run down as `app.exit` does.
@Suite struct PluginPermissionsTests {

    @Test func aLuaPluginHasNoDebugNoOsExitAndCannotStopTheCollector() async throws {
        let sandbox = try luaPluginSandbox("perm", main: """
            local s = service("perm", "Tries what it may not.")
            s:method("probe", {}, "string", "What is there.", function()
              return type(debug) .. " " .. tostring(pcall(require, "debug"))
            end)
            s:method("quit", {}, "nil", "Ends the host?", function() os.exit(5) end)
            s:method("stop", {}, "nil", "Stops the collector?", function() collectgarbage("stop") end)
            """)
        let result = try await crescent(["-e", """
            task(function()
              print(services.perm:probe())
              print(pcall(function() return services.perm:quit() end))
              print(pcall(function() return services.perm:stop() end))
              print("script continues")
            end)
            """], in: sandbox, timeLimit: 30)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines.first?.hasPrefix("nil false") == true, "\(result)")
        #expect(result.stdout.contains("os.exit is not available in plugin 'perm'"), "\(result)")
        #expect(result.stdout.contains("collectgarbage(\"stop\") is not available in plugin 'perm'"), "\(result)")
        #expect(result.stdoutLines.last == "script continues", "\(result)")
    }

    @Test func osExitInAPluginsMainBreaksThePluginNotTheRun() async throws {
        let sandbox = try luaPluginSandbox("ox", main: "os.exit(0)")
        let result = try await crescent(["-e", "print(pcall(function() return services.ox end)) print('script continues')"],
                                        in: sandbox, timeLimit: 30)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("os.exit is not available in plugin 'ox'"), "\(result)")
        #expect(result.stdoutLines.last == "script continues", "\(result)")
    }

    /// A process plugin whose child sits in its group: the script's os.exit(4) ends the run with 4
    /// and the child is gone, as with app.exit.
    @Test func aScriptsOsExitStopsProcessPluginsGroups() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("plugins/kid/plugin.toml", """
            name = "kid"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            services = ["kid"]
            command = ["python3", "kid.py"]

            [permissions]
            exec = ["sleep"]
            """)
        _ = try sandbox.write("plugins/kid/kid.py", """
            import json, os, subprocess, sys
            \(PluginTestPython.hostPids)
            child, child_pid = spawn_seen(["sleep", "60"])
            open(os.environ["CRESCENT_DATA_DIR"] + "/child.pid", "w").write(str(child_pid))
            for line in sys.stdin:
                message = json.loads(line)
                if message.get("method") == "initialize":
                    answer = {"services": [{"name": "kid", "summary": "k", "properties": [], "methods": [], "events": []}]}
                    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer}), flush=True)
            """)
        #expect(try await inHome(["plugins", "allow", "kid"], sandbox).status == 0)
        let result = try await inHome(["-e", "local k = services.kid os.exit(4)"], sandbox, timeLimit: 30)
        #expect(result.status == 4, "\(result)")
        let text = try String(contentsOfFile: sandbox.path + "/.local/share/crescent/plugin-data/kid/child.pid", encoding: .utf8)
        let child = try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        try await Task.sleep(for: .milliseconds(300))
        #expect(!Self.isRunning(child), "the plugin's child \(child) outlived the host")
        if Self.isRunning(child) { kill(child, SIGKILL) }
    }

    /// True while `pid` runs (a killed child reparented to an init that does not reap it stays a zombie).
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].hasPrefix(") Z")
    }
}
