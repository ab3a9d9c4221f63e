import Foundation

/// The `startup-plugins` rows: `crescent -e ''` with the two shipped plugins (`places`, `system`)
/// installed in the user's plugin folder and unused, against the same run with that folder empty;
/// `startup-plugins-used` the same once the plugins have been used (an earlier run touched their
/// services, so each has its declarations recorded under the data folder, as a user's plugins do).
///
/// Both run in an empty working folder (``StartupBench/inEmptyFolder(row:_:)``, so no `plugins/`
/// of the current folder is found), with
/// `XDG_DATA_HOME` pointing at a folder of the bench's own; the shipped plugins are copied from
/// `plugins/` in the current folder (`make bench` runs in the repository). Medians of alternate
/// runs after warm-ups, as `startup`; the goal is the ratio (within 5 %).
enum StartupPluginsBench {
    static let name = "startup-plugins"
    static let usedName = "startup-plugins-used"
    /// The difference measured is a few percent of a process that lives 6–15 ms, well inside the
    /// spread of single runs (±15 % here): 60 alternate runs keep the medians' ratio steady.
    static let runs = 60
    /// Touches both plugins' services in a task, which starts them and records their declarations.
    static let useScript = "task(function() local near = services.places.near; local system = services.system end)"

    static func run() throws(BenchFailure) -> BenchRow {
        try measure(row: name, used: false)
    }

    static func runUsed() throws(BenchFailure) -> BenchRow {
        try measure(row: usedName, used: true)
    }

    private static func measure(row: String, used: Bool) throws(BenchFailure) -> BenchRow {
        let crescent = try StartupBench.absoluteCrescentPath()
        let withPlugins = try BenchFolder(row: row)
        let without = try BenchFolder(row: row)
        let shipped = FileManager.default.currentDirectoryPath + "/plugins"
        do {
            try FileManager.default.createDirectory(atPath: withPlugins.path + "/crescent/plugins", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: without.path + "/crescent/plugins", withIntermediateDirectories: true)
            for plugin in ["places", "system"] {
                try FileManager.default.copyItem(atPath: shipped + "/" + plugin, toPath: withPlugins.path + "/crescent/plugins/" + plugin)
            }
        } catch {
            throw BenchFailure(row: row, reason: "cannot install the shipped plugins from \(shipped) (run in the repository): \(error)")
        }
        func launch(_ data: BenchFolder, _ arguments: [String] = ["-e", ""]) throws(BenchFailure) -> Double {
            try StartupBench.milliseconds(running: [crescent] + arguments, row: row, environment: ["XDG_DATA_HOME": data.path])
        }
        let samples = try StartupBench.inEmptyFolder(row: row) { () throws(BenchFailure) in
            if used {
                // The system plugin reads /proc, which the person grants once (stdin is no
                // terminal here, so `plugins allow` grants without asking).
                _ = try launch(withPlugins, ["plugins", "allow", "system"])
                _ = try launch(withPlugins, ["-e", useScript])
                for plugin in ["places", "system"] where !FileManager.default.fileExists(atPath: withPlugins.path + "/crescent/plugin-declarations/\(plugin).json") {
                    throw BenchFailure(row: row, reason: "a run touching the plugins' services recorded no declarations for \(plugin) "
                                       + "(\(withPlugins.path)/crescent/plugin-declarations): the system plugin needs python3")
                }
            }
            return try PairedSamples.collect(rounds: runs, warmups: StartupBench.warmups,
                                             subject: { () throws(BenchFailure) in try launch(withPlugins) },
                                             baseline: { () throws(BenchFailure) in try launch(without) })
        }
        let pairRatios = zip(samples.subject, samples.baseline).map { $0 / $1 }
        let state = used ? "installed in the user folder and used before (their declarations recorded by an earlier run), unused in this one"
            : "installed in the user folder, unused"
        return BenchRow(name: row, value: Statistics.median(samples.subject), baseline: Statistics.median(samples.baseline),
                        unit: "ms", goal: .ratioAtMost(1.05),
                        note: "median of \(runs) alternate runs of 'crescent -e \"\"' with places and system \(state); "
                            + "baseline: the same with the folder empty; the ratio pair by pair: median \(NumberFormat.fixed(Statistics.median(pairRatios), digits: 3)), "
                            + "range \(NumberFormat.fixed(Statistics.minimum(pairRatios), digits: 2))–\(NumberFormat.fixed(pairRatios.max() ?? .nan, digits: 2))")
    }
}
