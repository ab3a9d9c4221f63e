import Foundation

extension SpecRunner {
    /// Refuses the files a run writes (`--junit FILE`, and with `--coverage` `luacov.report.out`
    /// and `coverage/lcov.info`) when writing would destroy something: a report replaces the file
    /// at its path, so a device, a FIFO or a socket there (`--junit /dev/null` as root) would be
    /// replaced by a regular file, and a spec file, `.busted` or the config file lost.
    /// Called before the tests run and again just before writing; either way the run fails
    /// (exit 1) without a usage line: the command line is fine, the file at the path is not.
    static func checkReportTargets(_ options: SpecRunOptions, reading specs: [String]) throws(ReportFailure) {
        let inputs = specs + [".busted", options.hostOptions.configPath ?? "crescent.toml"]
        if let path = options.junitPath {
            try checkReportTarget(path, what: "the JUnit report", example: "junit.xml", inputs: inputs)
        }
        if options.coverage {
            try checkReportTarget("luacov.report.out", what: "the coverage report", example: nil, inputs: inputs)
            try checkReportTarget("coverage/lcov.info", what: "the LCOV file", example: nil, inputs: inputs)
        }
    }

    private static func checkReportTarget(_ path: String, what: String, example: String?,
                                          inputs: [String]) throws(ReportFailure) {
        let instead = example.map { "; name another file, such as \($0)" } ?? "; move it away"
        if let kind = RegularFile.nonRegularKind(path) {
            if kind == "a directory", let example {
                throw ReportFailure(description: "cannot write \(what) \(path): it is a folder; name a file, such as \(path)/\(example)")
            }
            throw ReportFailure(description: "cannot write \(what) \(path): it is \(kind), which writing the report would "
                             + "replace with a regular file\(instead)")
        }
        if path.hasSuffix(".lua") {
            throw ReportFailure(description: "cannot write \(what) \(path): a .lua file is a script or a spec, not a report\(instead)")
        }
        // Even when no such file exists yet: a report written as `.busted` or `crescent.toml`
        // becomes the settings every later run reads, and stops them all.
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if name == ".busted" || name == "crescent.toml" {
            throw ReportFailure(description: "cannot write \(what) \(path): \(name) is the name of the settings file later runs "
                             + "read\(instead)")
        }
        guard let target = RegularFile.identity(path) else { return }
        for input in inputs {
            guard let identity = RegularFile.identity(input), identity == target else { continue }
            throw ReportFailure(description: "cannot write \(what) \(path): it is \(input), which the run reads\(instead)")
        }
    }
}
