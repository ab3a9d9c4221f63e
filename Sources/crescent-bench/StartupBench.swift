import Glibc

/// The `startup` row: `crescent -e ''` as a whole process (spawn to exit) against `lua5.4 -e ''`.
///
/// Each is run `runs` times, alternately, after a few unrecorded warm-up runs; the value and the
/// baseline are medians in milliseconds. The goal is absolute (the ratio is informational).
/// The crescent binary is `$CRESCENT_BIN`, or `crescent` next to this executable (`make bench`
/// builds both into `.build/release`); the baseline is `$LUA_BIN`, or `lua5.4` on the `PATH`.
/// Children get `/dev/null` for stdin, stdout and stderr.
enum StartupBench {
    static let name = "startup"
    static let runs = 20
    static let warmups = 3
    static let goalMilliseconds = 15.0

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
            goal: .valueAtMost(goalMilliseconds),
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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let names = Set(extra.keys)
        var variables: [UnsafeMutablePointer<CChar>?] = extra.map { strdup("\($0.key)=\($0.value)") }
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if !names.contains(String(text.prefix { $0 != "=" })) { variables.append(strdup(pointer)) }
            entry += 1
        }
        variables.append(nil)
        defer { for variable in variables { free(variable) } }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }

        var pid = pid_t()
        var status: Int32 = 0
        var spawnError: Int32 = 0
        let start = MonotonicClock.nanoseconds()
        spawnError = posix_spawnp(&pid, arguments[0], &actions, nil, argv, variables)
        if spawnError == 0 {
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
        let elapsed = MonotonicClock.nanoseconds() - start

        let command = arguments.map { $0.isEmpty ? "''" : $0 }.joined(separator: " ")
        guard spawnError == 0 else {
            throw BenchFailure(row: row, reason: "cannot start '\(command)': \(String(cString: strerror(spawnError)))")
        }
        // The W* macros do not import: a normal exit has no signal bits, and the code in bits 8-15.
        let signal = status & 0x7f
        let exitCode = (status >> 8) & 0xff
        guard signal == 0, exitCode == 0 else {
            let how = signal == 0 ? "exited with status \(exitCode)" : "was killed by signal \(signal)"
            throw BenchFailure(row: row, reason: "'\(command)' \(how)")
        }
        return Double(elapsed) / 1_000_000
    }
}
