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
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen(["sleep", "60"])
        open("pids", "w").write("%d %d" % (os.getpid(), child.pid))
        for line in sys.stdin:
            message = json.loads(line)
            if message.get("method") == "initialize":
                answer = {"services": [{"name": "stuck", "summary": "s", "properties": [], "methods": [], "events": []}]}
                print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer}), flush=True)
        import time
        time.sleep(60)
        """

    func sandbox() throws -> Sandbox {
        let sandbox = try Sandbox()
        _ = try sandbox.write("plugins/stuck/plugin.toml", """
            name = "stuck"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            services = ["stuck"]
            command = ["python3", "stuck.py"]
            """)
        _ = try sandbox.write("plugins/stuck/stuck.py", Self.stubborn)
        return sandbox
    }

    func pids(in sandbox: Sandbox) throws -> [Int32] {
        let text = try String(contentsOfFile: sandbox.path + "/plugins/stuck/pids", encoding: .utf8)
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
        let sandbox = try sandbox()
        let host = CrescentProcess(["--data-dir", ":memory:", "-e", "local s = services.stuck print('started') task(function() sleep(30) end)"],
                                   directory: sandbox.path)
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
        let sandbox = try sandbox()
        let result = try await crescent(["--data-dir", ":memory:", "--timeout", "1", "-e", "local s = services.stuck task(function() sleep(30) end)"],
                                        in: sandbox, timeLimit: 20)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("plugin 'stuck' did not stop"), "\(result)")
        try await expectGone(try pids(in: sandbox))
    }
}
