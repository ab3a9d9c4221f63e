import Glibc

/// The `startup` row: `crescent -e ''` as a whole process (spawn to exit) against `lua5.4 -e ''`.
///
/// Each is run `runs` times, alternately, after a few unrecorded warm-up runs; the value and the
/// baseline are medians in milliseconds. The goal is a ratio: at most 4 times Lua's own start, so
/// it holds on a slow machine as on a fast one.
/// The crescent binary is `$CRESCENT_BIN`, or `crescent` next to this executable (`make bench`
/// builds both into `.build/release`); the baseline is `$LUA_BIN`, or `lua5.4` on the `PATH`.
/// Children get `/dev/null` for stdin, stdout and stderr.
enum StartupBench {
    static let name = "startup"
    static let runs = 20
    static let warmups = 3
    static let goalRatio = 4.0

    static func run() throws(BenchFailure) -> BenchRow {
        let crescent = try crescentPath()
        let lua = environment("LUA_BIN") ?? "lua5.4"
        let samples = try PairedSamples.collect(
            rounds: runs, warmups: warmups,
            subject: { () throws(BenchFailure) in try milliseconds(running: [crescent, "-e", ""]) },
            baseline: { () throws(BenchFailure) in try milliseconds(running: [lua, "-e", ""]) }
        )
        let range = { (samples: [Double]) in
            "\(NumberFormat.fixed(Statistics.minimum(samples), digits: 1))–\(NumberFormat.fixed(samples.max() ?? .nan, digits: 1)) ms"
        }
        return BenchRow(
            name: name,
            value: Statistics.median(samples.subject),
            baseline: Statistics.median(samples.baseline),
            unit: "ms",
            goal: .ratioAtMost(goalRatio),
            note: "median of \(runs) runs of '\(crescent) -e \"\"' (range \(range(samples.subject))) "
                + "vs '\(lua) -e \"\"' (range \(range(samples.baseline)))"
        )
    }

    /// `$CRESCENT_BIN`, or `crescent` in the directory this executable was started from.
    static func crescentPath() throws(BenchFailure) -> String {
        let path = environment("CRESCENT_BIN") ?? ownDirectory() + "/crescent"
        guard access(path, X_OK) == 0 else {
            throw BenchFailure(row: name, reason: "cannot run '\(path)' (build it with 'make bench' or set CRESCENT_BIN)")
        }
        return path
    }

    /// The directory of `argv[0]` when it names a path, else of `/proc/self/exe`.
    private static func ownDirectory() -> String {
        var invoked = CommandLine.arguments.first ?? ""
        if !invoked.contains("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            invoked = length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "./"
        }
        guard let slash = invoked.lastIndex(of: "/") else { return "." }
        return slash == invoked.startIndex ? "/" : String(invoked[..<slash])
    }

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// Spawns `arguments` (the first is the program: a path, or a name looked up in `PATH`), waits
    /// for it and returns the wall time in milliseconds. A failure to start or a non-zero exit fails.
    /// - Parameter environment: variables set or replaced in the child's environment.
    static func milliseconds(running arguments: [String], row: String = name,
                             environment extra: [String: String] = [:]) throws(BenchFailure) -> Double {
        try TimedRun.run(arguments, stdout: "/dev/null", stderr: "/dev/null", environment: extra, row: row).wallSeconds * 1000
    }
}
