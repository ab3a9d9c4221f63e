import Glibc

/// One whole process run for the rows that measure what a user runs: spawn to exit, with its
/// wall time and the CPU time of all its threads (`wait4`'s rusage), stdin from `/dev/null`,
/// stdout and stderr into files (of the row's folder, so the row can check what it printed) or
/// `/dev/null`.
struct TimedRun {
    /// Seconds from spawn to exit.
    let wallSeconds: Double
    /// User plus system seconds of the process (every thread).
    let cpuSeconds: Double

    /// Runs `arguments` (the first is the program: a path, or a name looked up in `PATH`) in
    /// `folder`'s files: stdout goes to `folder/stdoutName`, stderr to `folder/stderr.txt`.
    /// A failure to start or a non-zero exit fails the row, quoting the start of stderr.
    static func run(_ arguments: [String], stdoutName: String, in folder: BenchFolder, row: String) throws(BenchFailure) -> TimedRun {
        try run(arguments, stdout: folder.path + "/" + stdoutName, stderr: folder.path + "/stderr.txt", row: row)
    }

    /// Runs `arguments` with stdout and stderr into the files at those paths (`/dev/null` to
    /// discard them) and `extra` set or replaced in its environment. A failure to start or a
    /// non-zero exit fails the row.
    static func run(_ arguments: [String], stdout: String, stderr: String, environment extra: [String: String] = [:],
                    row: String) throws(BenchFailure) -> TimedRun {
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
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }

        var pid = pid_t()
        var status: Int32 = 0
        var usage = rusage()
        let start = MonotonicClock.nanoseconds()
        let spawnError = posix_spawnp(&pid, arguments[0], &actions, nil, argv, variables)
        if spawnError == 0 {
            while wait4(pid, &status, 0, &usage) == -1 && errno == EINTR {}
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
            throw BenchFailure(row: row, reason: "'\(command)' \(how)" + excerpt(of: stderr))
        }
        let seconds = { (time: timeval) in Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return TimedRun(wallSeconds: Double(elapsed) / 1e9, cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime))
    }

    /// `: ` and the start of the file at `path`, when there is something to quote.
    private static func excerpt(of path: String) -> String {
        guard path != "/dev/null", let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 600)
        let count = fread(&buffer, 1, buffer.count, file)
        return count > 0 ? ": " + String(decoding: buffer[..<count], as: UTF8.self) : ""
    }
}
