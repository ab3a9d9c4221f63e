import CrescentKit
import Foundation

/// The `sandbox-start` row: the time to start a sandboxed process plugin (user namespace,
/// Landlock, seccomp, rlimits) and have its first call answered, against the same plugin started
/// plainly (no confinement) in the same run.
extension PluginRows {
    static func sandboxStart() throws(BenchFailure) -> BenchRow {
        let row = "sandbox-start"
        let folder = try BenchFolder(row: row)
        // One interpreter for both: the sandbox looks programs up on its own PATH, the plain start
        // on the host's (which may find a version manager's shim, a slower start).
        guard let python = ["/usr/local/bin", "/usr/bin", "/bin"].map({ $0 + "/python3" }).first(where: { access($0, X_OK) == 0 }) else {
            throw BenchFailure(row: row, reason: "no python3 in /usr/local/bin, /usr/bin or /bin")
        }
        try writeEchoPlugin(in: folder, python: python, row: row)
        // Read only where the kernel offers no Landlock: then the plugin may start unconfined.
        try folder.write("crescent.toml", "[plugins]\nallow_unsandboxed = [\"pyecho\"]\n", row: row)
        var options = HostOptions()
        options.pluginSearch = PluginSearch(folders: [folder.path], onlyFolders: true)
        options.configPath = folder.path + "/crescent.toml"
        options.dataDirectory = folder.path + "/data"
        // The first touch starts the program, waits for its `initialize` answer and one call.
        let script = """
            task(function()
              local t0 = bench_now()
              assert(services.pyecho:echo(1) == 1)
              print((bench_now() - t0) * 1000)
            end)
            """
        func start(confined: Bool) throws(BenchFailure) -> Double {
            // The bench's own switch (PluginSandbox.landlockABI): "0" starts the plugin as on a
            // kernel without Landlock. Set between runs, while no host of this process runs.
            if confined { unsetenv("CRESCENT_LANDLOCK_ABI") } else { setenv("CRESCENT_LANDLOCK_ABI", "0", 1) }
            defer { unsetenv("CRESCENT_LANDLOCK_ABI") }
            let output = Output()
            let console = Console(colors: false) { stream, text in output.append(stream, text) }
            let status = ScriptRunner.run(.code(script), bytes: Array(prelude(script).utf8), options: options,
                                          plugins: [], console: console)
            guard status == 0, let milliseconds = Double(output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw BenchFailure(row: row, reason: "the run failed (\(status)): \(output.stdout) \(output.stderr)")
            }
            return milliseconds
        }
        let samples = try PairedSamples.collect(rounds: 10, warmups: 1,
                                                subject: { () throws(BenchFailure) in try start(confined: true) },
                                                baseline: { () throws(BenchFailure) in try start(confined: false) })
        return BenchRow(name: row, value: Statistics.minimum(samples.subject), baseline: Statistics.minimum(samples.baseline),
                        unit: "ms", goal: .ratioAtMost(1.5),
                        note: "start of a process plugin (Python) to its first answer, sandboxed, best of 10; baseline: the same plugin started without confinement")
    }
}
