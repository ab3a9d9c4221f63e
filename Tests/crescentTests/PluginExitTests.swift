import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// On every way the host exits, no process plugin (nor what it started in its group) outlives
/// it: a plugin that ignores `shutdown` and SIGTERM is killed, group and all, and named.
@Suite struct PluginExitTests {
    static let stubborn = """
        import json, signal, subprocess, sys, os
        \(PluginTestPython.hostPids)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child, child_pid = spawn_seen(["sleep", "60"])
        open(os.environ["CRESCENT_DATA_DIR"] + "/pids", "w").write("%d %d" % (host_pid(), child_pid))
        for line in sys.stdin:
            message = json.loads(line)
            if message.get("method") == "initialize":
                answer = {"services": [{"name": "stuck", "summary": "s", "properties": [], "methods": [], "events": []}]}
                print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer}), flush=True)
        import time
        time.sleep(60)
        """

    /// The stuck plugin, granted (it runs `sleep`) in the sandbox's HOME: run it with ``inHome``.
    func sandbox() async throws -> Sandbox {
        let sandbox = try Sandbox()
        _ = try sandbox.write("plugins/stuck/plugin.toml", """
            name = "stuck"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            services = ["stuck"]
            command = ["python3", "stuck.py"]

            [permissions]
            exec = ["sleep"]
            """)
        _ = try sandbox.write("plugins/stuck/stuck.py", Self.stubborn)
        let granted = try await inHome(["plugins", "allow", "stuck"], sandbox)
        #expect(granted.status == 0, "\(granted)")
        return sandbox
    }

    /// The pids the plugin wrote into its data folder (under the sandbox's HOME).
    func pids(in sandbox: Sandbox) throws -> [Int32] {
        let text = try String(contentsOfFile: sandbox.path + "/.local/share/crescent/plugin-data/stuck/pids", encoding: .utf8)
        return text.split(separator: " ").compactMap { Int32($0) }
    }

    func expectGone(_ pids: [Int32], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await Task.sleep(for: .milliseconds(300))
        for pid in pids {
            #expect(!PluginPermissionsTests.isRunning(pid), "process \(pid) of the plugin outlived the host", sourceLocation: sourceLocation)
            if PluginPermissionsTests.isRunning(pid) { kill(pid, SIGKILL) }
        }
    }

    @Test func sigtermKillsAPluginThatIgnoresShutdownAndNamesIt() async throws {
        let sandbox = try await sandbox()
        let home: [String: String?] = ["HOME": sandbox.path, "XDG_DATA_HOME": nil]
        let host = CrescentProcess(["--data-dir", ":memory:", "-e", "local s = services.stuck print('started') task(function() sleep(30) end)"],
                                   directory: sandbox.path, environment: home)
        try host.start()
        #expect(await host.waitForOutput("started", within: 20), "\(host.stderr)")
        let pids = try pids(in: sandbox)
        #expect(pids.count == 2)
        host.send(SIGTERM, expecting: .handled)
        let result = await host.finish(timeLimit: 20)
        #expect(result.status == 143, "\(result)")
        #expect(result.stderr.contains("plugin 'stuck' did not stop (its process group was killed)"), "\(result)")
        try await expectGone(pids)
    }

    @Test func aTimeoutKillsAPluginThatIgnoresShutdown() async throws {
        let sandbox = try await sandbox()
        let result = try await inHome(["--data-dir", ":memory:", "--timeout", "1", "-e", "local s = services.stuck task(function() sleep(30) end)"],
                                      sandbox, timeLimit: 20)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("plugin 'stuck' did not stop"), "\(result)")
        try await expectGone(try pids(in: sandbox))
    }
}
