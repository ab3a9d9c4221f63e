import Synchronization
import CrescentKit
import Foundation
import LuaBridge
import Model

/// The run-time plugins' rows: an awaited call of a Lua plugin's method against the same call of
/// a Swift service's, and an awaited call of a process plugin's method against a Python client
/// making the same one-line JSON round trip to the same program.
enum PluginRows {
    // MARK: plugin-call

    static func pluginCall() throws(BenchFailure) -> BenchRow {
        let row = "plugin-call"
        let folder = try BenchFolder(row: row)
        try folder.write("plugin.toml", """
            name = "luaecho"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["luaecho"]
            """, row: row)
        try folder.write("main.lua", """
            local echo = service("luaecho", "Answers its argument.")
            echo:method("echo", { "value: value" }, "value", "Answers its argument.", function(value) return value end)
            """, row: row)
        var options = HostOptions()
        options.pluginSearch = PluginSearch(folders: [folder.path], onlyFolders: true)
        let bench = try BenchHost(row: row, options: options)
        try bench.run("""
            local plugin, swift = services.luaecho, services.bench
            function start_plugin(n)
              task(function() local s = 0 for i = 1, n do s = s + plugin:echo(i) end total = s end)
            end
            function start_swift(n)
              task(function() local s = 0 for i = 1, n do s = s + swift:echo(i) end total = s end)
            end
            """)
        let n: Int64 = 5_000
        func round(_ function: String) throws(BenchFailure) -> Double {
            try MonotonicClock.time { () throws(BenchFailure) in
                try bench.call(function, n)
                try bench.drain()
            } / Double(n)
        }
        let samples = try PairedSamples.collect(rounds: 15, warmups: 2,
                                                subject: { () throws(BenchFailure) in try round("start_plugin") },
                                                baseline: { () throws(BenchFailure) in try round("start_swift") })
        _ = bench.vm.getGlobal("total")
        let total = bench.vm.stack.integer(at: -1)
        bench.vm.stack.pop()
        guard total == n * (n + 1) / 2 else { throw BenchFailure(row: row, reason: "total \(total.map(String.init) ?? "nil")") }
        return BenchRow(name: row, value: Statistics.minimum(samples.subject) / 1000,
                        baseline: Statistics.minimum(samples.baseline) / 1000, unit: "µs", goal: .ratioAtMost(2),
                        note: "\(n) awaited echo calls of a Lua plugin per round, best of 15; baseline: the same calls of a Swift service")
    }

    // MARK: process-call

    /// The echo program both sides talk to, and the Python client of the baseline.
    static let echoProgram = #"""
        import json, sys
        for line in sys.stdin:
            message = json.loads(line)
            method, id = message.get("method"), message.get("id")
            if method == "shutdown":
                break
            if id is None:
                continue
            if method == "initialize":
                result = {"services": [{"name": "pyecho", "summary": "Echo.", "properties": [], "events": [],
                          "methods": [{"name": "echo", "args": [{"name": "value", "type": "value"}], "returns": "value"}]}]}
            else:
                result = message["params"]["args"][0]
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + "\n")
            sys.stdout.flush()
        """#

    static let client = #"""
        import json, subprocess, sys, time
        n = int(sys.argv[1])
        child = subprocess.Popen([sys.executable, sys.argv[2]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        def call(id, method, params):
            child.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n")
            child.stdin.flush()
            return json.loads(child.stdout.readline())["result"]
        call(0, "initialize", {"crescent": "0.1.0", "settings": {}})
        best = None
        for _ in range(5):
            start = time.perf_counter()
            total = 0
            for i in range(1, n + 1):
                total += call(i, "call", {"service": "pyecho", "method": "echo", "args": [i]})
            elapsed = time.perf_counter() - start
            assert total == n * (n + 1) // 2
            best = elapsed if best is None else min(best, elapsed)
        child.stdin.close()
        child.wait()
        print(best / n * 1e6)
        """#

    static func processCall() throws(BenchFailure) -> BenchRow {
        let row = "process-call"
        let folder = try BenchFolder(row: row)
        try writeEchoPlugin(in: folder, python: "python3", row: row)
        try folder.write("client.py", client, row: row)
        let n = 2_000
        var options = HostOptions()
        options.pluginSearch = PluginSearch(folders: [folder.path], onlyFolders: true)
        // Five timed rounds inside one run, after a warm-up call that starts the program.
        let script = """
            task(function()
              local echo = services.pyecho
              echo:echo(0)
              local best
              for _ = 1, 5 do
                local t0 = bench_now()
                local s = 0
                for i = 1, \(n) do s = s + echo:echo(i) end
                assert(s == \(n * (n + 1) / 2))
                local elapsed = bench_now() - t0
                best = best and math.min(best, elapsed) or elapsed
              end
              print(best / \(n) * 1e6)
            end)
            """
        let output = Output()
        let console = Console(colors: false) { stream, text in output.append(stream, text) }
        let status = ScriptRunner.run(.code(script), bytes: Array(Self.prelude(script).utf8), options: options,
                                      plugins: [], console: console)
        guard status == 0, let subject = Double(output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchFailure(row: row, reason: "the run failed (\(status)): \(output.stdout) \(output.stderr)")
        }
        let baseline = try python(["python3", folder.path + "/client.py", String(n), folder.path + "/echo.py"], row: row)
        return BenchRow(name: row, value: subject, baseline: baseline, unit: "µs", goal: .ratioAtMost(1.5),
                        note: "\(n) awaited echo calls of a process plugin (Python) per round, best of 5; baseline: a Python client's round trips to the same program over a pipe")
    }

    /// The process plugin `pyecho` in `folder`: ``echoProgram`` run by `python`.
    static func writeEchoPlugin(in folder: BenchFolder, python: String, row: String) throws(BenchFailure) {
        try folder.write("plugin.toml", """
            name = "pyecho"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "process"
            command = ["\(python)", "echo.py"]
            services = ["pyecho"]
            """, row: row)
        try folder.write("echo.py", echoProgram, row: row)
    }

    /// `bench_now()`: the time in seconds (read twice per round, outside the timed calls), for the
    /// script to time its own loop without the host's and the program's start-up.
    static func prelude(_ script: String) -> String {
        "function bench_now() local f = io.popen('date +%s.%N') local t = tonumber(f:read('a')) f:close() return t end\n" + script
    }

    /// What the run printed: appended from the console's writer, read after the run.
    final class Output: Sendable {
        private let text = Mutex<(out: String, err: String)>(("", ""))
        func append(_ stream: Console.Stream, _ line: String) {
            text.withLock { if stream == .error { $0.err += line } else { $0.out += line } }
        }
        var stdout: String { text.withLock { $0.out } }
        var stderr: String { text.withLock { $0.err } }
    }

    private static func python(_ arguments: [String], row: String) throws(BenchFailure) -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        do {
            try process.run()
        } catch {
            throw BenchFailure(row: row, reason: "cannot run python3: \(error)")
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let value = Double(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchFailure(row: row, reason: "the Python client failed")
        }
        return value
    }
}
