import Foundation

/// The `startup-plugins` row: `crescent -e ''` with the two shipped plugins (`places`, `system`)
/// installed in the user's plugin folder and unused, against the same run with that folder empty.
///
/// Both run in an empty working folder (``StartupBench/inEmptyFolder(row:_:)``, so no `plugins/`
/// of the current folder is found), with
/// `XDG_DATA_HOME` pointing at a folder of the bench's own; the shipped plugins are copied from
/// `plugins/` in the current folder (`make bench` runs in the repository). Medians of alternate
/// runs after warm-ups, as `startup`; the goal is the ratio (within 5 %).
enum StartupPluginsBench {
    static let name = "startup-plugins"
    /// The difference measured is a few percent of a process that lives 6–15 ms, well inside the
    /// spread of single runs (±15 % here): 60 alternate runs keep the medians' ratio steady.
    static let runs = 60

    static func run() throws(BenchFailure) -> BenchRow {
        let crescent = try StartupBench.absoluteCrescentPath()
        let withPlugins = try BenchFolder(row: name)
        let without = try BenchFolder(row: name)
        let shipped = FileManager.default.currentDirectoryPath + "/plugins"
        do {
            try FileManager.default.createDirectory(atPath: withPlugins.path + "/crescent/plugins", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: without.path + "/crescent/plugins", withIntermediateDirectories: true)
            for plugin in ["places", "system"] {
                try FileManager.default.copyItem(atPath: shipped + "/" + plugin, toPath: withPlugins.path + "/crescent/plugins/" + plugin)
            }
        } catch {
            throw BenchFailure(row: name, reason: "cannot install the shipped plugins from \(shipped) (run in the repository): \(error)")
        }
        func launch(_ data: BenchFolder) throws(BenchFailure) -> Double {
            try StartupBench.milliseconds(running: [crescent, "-e", ""], row: name, environment: ["XDG_DATA_HOME": data.path])
        }
        let samples = try StartupBench.inEmptyFolder(row: name) { () throws(BenchFailure) in
            try PairedSamples.collect(rounds: runs, warmups: StartupBench.warmups,
                                      subject: { () throws(BenchFailure) in try launch(withPlugins) },
                                      baseline: { () throws(BenchFailure) in try launch(without) })
        }
        let pairRatios = zip(samples.subject, samples.baseline).map { $0 / $1 }
        return BenchRow(name: name, value: Statistics.median(samples.subject), baseline: Statistics.median(samples.baseline),
                        unit: "ms", goal: .ratioAtMost(1.05),
                        note: "median of \(runs) alternate runs of 'crescent -e \"\"' with places and system installed in the user folder, unused; "
                            + "baseline: the same with the folder empty; the ratio pair by pair: median \(NumberFormat.fixed(Statistics.median(pairRatios), digits: 3)), "
                            + "range \(NumberFormat.fixed(Statistics.minimum(pairRatios), digits: 2))–\(NumberFormat.fixed(pairRatios.max() ?? .nan, digits: 2))")
    }
}
