import CSandbox
import Services
#if canImport(Glibc)
import Glibc
#endif

/// What a Lua plugin runs through its `exec` grant (`io.popen`, `os.execute`): the program itself
/// (no shell: the Lua side lets only plain words through), in the plugin folder, under the same
/// kernel confinement as a process plugin's program (``PluginSandbox/confine(_:program:strings:)``),
/// with only the granted environment variables and `PATH`, and never the host's standard
/// streams: stdin is /dev/null (the pipe for `io.popen(command, "w")`), stdout the pipe of
/// `io.popen(command)`, and what it writes elsewhere goes to the log (`os.execute`'s output, as
/// the plugin's `info` lines) or to the host's stderr, where the log is written (`io.popen`'s
/// stderr).
extension LuaPluginRuntime {
    /// How a program's standard streams are joined to the plugin.
    enum ExecStreams {
        /// `io.popen(command)`: its stdout is the pipe the plugin reads.
        case read
        /// `io.popen(command, "w")`: its stdin is the pipe the plugin writes.
        case write
        /// `os.execute(command)`: stdin /dev/null, stdout and stderr read into the log.
        case execute
    }

    /// What starting a program answered.
    enum Launch {
        /// It runs: its pid, and the plugin's end of its pipe.
        case started(pid: pid_t, pipe: Int32)
        /// The plugin may not run it (raised in the plugin, warned in the log).
        case refused(String)
        /// It could not start.
        case failed(String)
    }

    /// Starts `command` (plain words, its first a granted program: the Lua side checked that).
    func launch(_ command: String, _ streams: ExecStreams, what: String) -> Launch {
        let words = command.split(whereSeparator: { " \t\n\r\u{0B}\u{0C}".contains($0) }).map(String.init)
        let name = manifest.name
        guard let first = words.first, sandbox.permissions.exec.contains(first) else {
            return .refused("\(what): permission: plugin '\(name)' may not run \"\(command)\": not granted (add it to [permissions] exec in its plugin.toml, then run crescent plugins allow \(name))")
        }
        guard PluginSandbox.landlockABI() > 0 else {
            return .refused("\(what): permission: plugin '\(name)' may not run \"\(command)\": the kernel offers no Landlock to confine it (Linux 5.13 or later, with Landlock enabled)")
        }
        guard let program = PluginSandbox.program(first, folder: sandbox.folder, path: PluginSandbox.confinedPath) else {
            return .failed("\(what): \(first) is not an executable program on \(PluginSandbox.confinedPath)")
        }
        // Checked again here, on the file that will run: the granted file may have become a
        // loader since the manifest was read (a copy saved under the granted path), or become
        // one between a check and an exec of its path.
        let opened: OpenedProgram
        switch OpenedProgram.open(program) {
        case .opened(let file): opened = file
        case .loader(let shown):
            return .refused("\(what): permission: plugin '\(name)' may not run \"\(command)\": it names \(shown), \(PluginExecEntry.loaderRefusal)")
        case .refused(let reason):
            return .refused("\(what): permission: plugin '\(name)' may not run \"\(command)\": \(reason)")
        case .failed(let reason): return .failed("\(what): cannot start \"\(command)\": \(reason)")
        }
        defer { opened.close() }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return .failed("\(what): pipe: \(String(cString: strerror(errno)))") }
        // Close-on-exec: no other child inherits them (the program gets its end through dup2).
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        // The plugin's end of the pipe, and the child's.
        let (mine, theirs) = streams == .write ? (ends[1], ends[0]) : (ends[0], ends[1])
        let strings = CStrings()
        defer { strings.free() }
        var spec = crescent_sandbox()
        spec.program = strings.constant(program)
        // A `#!` script runs as the kernel would run it, from the interpreter the host opened
        // and checked: its path and argument, then the script as /dev/fd/N (OpenedProgram).
        spec.argv = UnsafePointer(strings.list((opened.isScript ? opened.leadingArguments : [program]) + words.dropFirst()))
        spec.envp = UnsafePointer(strings.list(sandbox.environment().map { "\($0.key)=\($0.value)" }))
        spec.directory = strings.constant(sandbox.folder)
        switch streams {
        case .read: (spec.stdin_fd, spec.stdout_fd, spec.stderr_fd) = (null, theirs, STDERR_FILENO)
        case .write: (spec.stdin_fd, spec.stdout_fd, spec.stderr_fd) = (theirs, STDERR_FILENO, STDERR_FILENO)
        case .execute: (spec.stdin_fd, spec.stdout_fd, spec.stderr_fd) = (null, theirs, theirs)
        }
        sandbox.confine(&spec, program: program, opened: opened, strings: strings)
        // Not recorded in ProcessGroups: `io.popen`'s close reaps it in C, where the record could
        // not be dropped first. A program gone before the plugin writes its pipe makes the write
        // fail, not end the host (the launcher ignores SIGPIPE).
        let spawned = ProcessLauncher.spawnConfined(&spec, group: nil)
        close(theirs)
        close(null)
        switch spawned {
        case .success(let pid):
            return .started(pid: pid, pipe: mine)
        case .failure(let failure):
            close(mine)
            return .failed("\(what): cannot start \"\(command)\" in its sandbox: \(failure.step)")
        }
    }

    /// Runs `command` as `os.execute` does and answers its three results (true or nil, "exit"
    /// or "signal", the code): its output goes to the log line by line; it is killed (with what
    /// it started) when it runs past the call time limit, since it holds the host's loop.
    func execute(_ command: String) -> Result<(Bool, String, Int32), LaunchRefusal> {
        let pid: pid_t, output: Int32
        switch launch(command, .execute, what: "os.execute") {
        case .started(let started, let pipe): (pid, output) = (started, pipe)
        case .refused(let message): return .failure(LaunchRefusal(message: message, refused: true))
        case .failed(let message): return .failure(LaunchRefusal(message: message, refused: false))
        }
        defer { close(output) }
        let deadline = PluginProcess.milliseconds() + Int64(callTimeout * 1000)
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        var timedOut = false
        // Bounded: ends at end of file or at the deadline (each poll waits what is left of it).
        while true {
            let left = deadline - PluginProcess.milliseconds()
            guard left > 0 else { timedOut = true; break }
            var ready = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(clamping: left))
            if polled < 0 && errno == EINTR { continue }
            if polled == 0 { continue }
            let count = read(output, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            pending += buffer[0..<count]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                logOutput(pending[..<newline])
                pending.removeSubrange(...newline)
            }
            // A line without end is logged in pieces rather than held without bound.
            if pending.count > 65536 {
                logOutput(pending[...])
                pending = []
            }
        }
        if !pending.isEmpty { logOutput(pending[...]) }
        if timedOut {
            kill(-pid, SIGKILL)
            warnRefused("os.execute(\"\(command)\") ran past the time limit of \(limitText): killed")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        if signal != 0 { return .success((false, "signal", signal)) }
        let code = (status >> 8) & 0xff
        return .success((code == 0, "exit", code))
    }

    /// Why a program did not run: `refused` when the plugin may not run it.
    struct LaunchRefusal: Error {
        let message: String
        let refused: Bool
    }

    private func logOutput(_ bytes: ArraySlice<UInt8>) {
        (host.parent ?? host).log(.info, plugin: manifest.name, String(decoding: bytes, as: UTF8.self))
    }
}
