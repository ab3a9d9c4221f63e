/// The `test-runner-coverage` row: the `test-runner` spec (1,000 trivial `it` blocks, each in its
/// fresh host) under `crescent test --coverage`, against the same run without it; both timed
/// spawn to exit, in tests per second (medians). The line hook and the reports may cost at most
/// half: the goal is a ratio of at least 0.5.
enum TestRunnerCoverageBench {
    static let name = "test-runner-coverage"
    static let runs = 3

    static func run() throws(BenchFailure) -> BenchRow {
        let crescent = try StartupBench.absoluteCrescentPath()
        let folder = try BenchFolder(row: name)
        try folder.write("bench_spec.lua", TestRunnerBench.spec, row: name)
        let tests = Double(TestRunnerBench.tests)
        // Both run in the bench's folder (through sh, for both alike): --coverage writes its reports
        // in the current folder.
        func inFolder(_ options: String) -> [String] {
            ["/bin/sh", "-c", "cd '\(folder.path)' && exec '\(crescent)' test \(options) bench_spec.lua"]
        }
        let samples = try PairedSamples.collect(
            rounds: runs, warmups: 1,
            subject: { () throws(BenchFailure) in
                tests / (try StartupBench.milliseconds(running: inFolder("--coverage"), row: name) / 1000)
            },
            baseline: { () throws(BenchFailure) in
                tests / (try StartupBench.milliseconds(running: inFolder(""), row: name) / 1000)
            }
        )
        let value = Statistics.median(samples.subject)
        let baseline = Statistics.median(samples.baseline)
        return BenchRow(
            name: name,
            value: value,
            baseline: baseline,
            unit: "tests/s",
            goal: .ratioAtLeast(0.5),
            note: "median of \(runs) whole-process runs of 'crescent test --coverage' on the test-runner spec, vs the same "
                + "without --coverage (\(NumberFormat.fixed(value / baseline, digits: 2))x; at least 0.5x)"
        )
    }
}
