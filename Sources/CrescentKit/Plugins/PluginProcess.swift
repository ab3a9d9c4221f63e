import CSandbox
import Services
#if canImport(Glibc)
import Glibc
#endif

/// A process plugin's program, started with pipes on its stdin, stdout and stderr.
///
/// It runs with the plugin folder as its working directory, confined to its permissions, with
/// `CRESCENT_PLUGIN_DIR` and `CRESCENT_DATA_DIR` in its environment. The host's ends of the pipes are
/// close-on-exec, so no other child inherits them: when the host goes, even by `kill -9`, the
/// program sees its stdin close (and must exit then). It starts through ``ProcessLauncher``, the
/// one home for starting programs (signals, descriptors, process group).
struct PluginProcess {
    let pid: pid_t
    /// The host's ends: write to the program's stdin, read its stdout and stderr.
    let stdin: Int32
    let stdout: Int32
    let stderr: Int32

    /// Starts `command` (the program is looked up in `PATH` unless it holds a `/`) in the plugin
    /// folder, in a session and process group of its own. Confined by `sandbox` (nil: only on a
    /// kernel without Landlock, for a plugin `[plugins] allow_unsandboxed` names): no_new_privs,
    /// its Landlock ruleset, a network namespace without interfaces unless `net` is granted,
    /// only the granted environment variables, rlimits, and no new processes unless `exec` is
    /// granted (see CSandbox). Without it the program gets the host's environment.
    static func spawn(_ command: [String], plugin: String, folder: String, environment extra: [String: String],
                      sandbox: PluginSandbox?) throws(PluginProblem) -> PluginProcess {
        let searched = sandbox == nil ? nil : PluginSandbox.confinedPath
        guard let program = PluginSandbox.program(command[0], folder: folder, path: searched) else {
            let near = PluginSandbox.nearProgram(command[0], path: searched).map { "; did you mean '\($0)'?" } ?? ""
            throw PluginProblem("cannot start '\(command.joined(separator: " "))': \(command[0]) is not an executable program"
                                + (command[0].contains("/") ? "" : " on PATH") + near)
        }
        guard let input = pipePair(), let output = pipePair() else { throw failure(command, errno) }
        guard let errors = pipePair() else {
            closeAll(input + output)
            throw failure(command, errno)
        }
        var variables: [String: String] = [:]
        if let sandbox {
            variables = sandbox.environment()
        } else {
            var entry = environ
            while let pointer = entry.pointee {
                let text = String(cString: pointer)
                if let equals = text.firstIndex(of: "=") { variables[String(text[..<equals])] = String(text[text.index(after: equals)...]) }
                entry += 1
            }
        }
        for (name, value) in extra { variables[name] = value }

        let strings = CStrings()
        defer { strings.free() }
        var spec = crescent_sandbox()
        spec.program = strings.constant(program)
        let argv = strings.list([program] + command.dropFirst())
        let environment = strings.list(variables.map { "\($0.key)=\($0.value)" })
        spec.argv = UnsafePointer(argv)
        spec.envp = UnsafePointer(environment)
        spec.directory = strings.constant(folder)
        spec.stdin_fd = input[0]
        spec.stdout_fd = output[1]
        spec.stderr_fd = errors[1]
        if let sandbox { sandbox.confine(&spec, program: program, strings: strings) }
        // The handshake writes to the pipe before NIO owns it; the launcher makes a write to a
        // program that is gone fail rather than end the host, and records the group.
        let spawned = ProcessLauncher.spawnConfined(&spec, group: plugin)
        close(input[0])
        close(output[1])
        close(errors[1])
        switch spawned {
        case .success(let pid):
            return PluginProcess(pid: pid, stdin: input[1], stdout: output[0], stderr: errors[0])
        case .failure(let failure):
            closeAll([input[1], output[0], errors[0]])
            throw PluginProblem("cannot start '\(command.joined(separator: " "))'\(sandbox == nil ? "" : " in its sandbox"): \(failure.step)")
        }
    }

    private static func failure(_ command: [String], _ code: Int32) -> PluginProblem {
        PluginProblem("cannot start '\(command.joined(separator: " "))': \(String(cString: strerror(code)))")
    }

    /// A pipe whose two ends are close-on-exec (the program gets its copies through dup2).
    private static func pipePair() -> [Int32]? {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return ends
    }

    private static func closeAll(_ descriptors: [Int32]) {
        for descriptor in descriptors { close(descriptor) }
    }

    /// Ends the program and everything it started in its process group, and reaps it: waits
    /// up to `grace` seconds for the program to exit, then kills the group (what the program
    /// left running with it, and the program itself if it still runs). Nothing the plugin
    /// started outlives its stop or the host. Answers the program's wait status when it had
    /// ended by itself, nil when this ended it (or its status could not be had).
    @discardableResult
    func reap(grace: Double) -> Int32? {
        var waited = 0.0
        var exited = hasExited()
        while !exited, waited < grace {
            usleep(10_000)
            waited += 0.01
            exited = hasExited()
        }
        // The program is not reaped yet (at most a zombie), so its pid still names its group and
        // no other process can have taken it.
        kill(-pid, SIGKILL)
        ProcessGroups.remove(pid)
        var status: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(pid, &status, 0) } while reaped == -1 && errno == EINTR
        return exited && reaped == pid ? status : nil
    }

    /// Every process descended from the program now (``ProcessTree``): read before the program
    /// is stopped.
    func descendants() -> [pid_t] {
        ProcessTree.descendants(of: pid)
    }

    /// Kills what ``descendants()`` found that still runs outside the program's group (the group
    /// itself is killed by ``reap(grace:)``).
    static func killStrays(_ strays: [pid_t]) {
        for stray in strays { Glibc.kill(stray, SIGKILL) }
    }

    /// True once the program has exited, without reaping it.
    private func hasExited() -> Bool {
        var info = siginfo_t()
        while true {
            let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
            if result == 0 { return info._sifields._kill.si_pid == pid }
            if errno != EINTR { return true }
        }
    }

    /// Reads one line from stdout, after the bytes `buffered` from an earlier read, waiting until
    /// `deadline` (``milliseconds()``): the line, with what was read after it left in `buffered`,
    /// or nil once the deadline has passed, with what was read of the next line left in
    /// `buffered` (a caller that goes on reading elsewhere must start with those bytes).
    func readLine(until deadline: Int64, buffered bytes: inout [UInt8],
                  maximumLength: Int) throws(PluginProblem) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var remaining = Int32(clamping: max(deadline - PluginProcess.milliseconds(), 0))
        while true {
            if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(bytes[..<newline])
                bytes.removeSubrange(...newline)
                return line
            }
            guard bytes.count <= maximumLength else { throw PluginProblem("its first line is longer than \(maximumLength) bytes") }
            guard remaining > 0 else { return nil }
            var descriptor = pollfd(fd: stdout, events: Int16(POLLIN), revents: 0)
            // The handshake blocks the loop, so it is bounded in real time whatever the host's
            // clock: each poll takes what is left of the bound.
            let started = PluginProcess.milliseconds()
            let ready = poll(&descriptor, 1, remaining)
            remaining -= Int32(clamping: PluginProcess.milliseconds() - started)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let count = read(stdout, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw PluginProblem("it exited before answering 'initialize'") }
            bytes += buffer[0..<count]
        }
    }

    /// What the program wrote to stderr so far (at most 4 KiB, waiting at most 0.2 s): why it
    /// could not start, for the message that reports it.
    func errorOutput() -> String {
        var descriptor = pollfd(fd: stderr, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 200) > 0 else { return "" }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(stderr, &buffer, buffer.count)
        guard count > 0 else { return "" }
        return String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").joined(separator: " | ")
    }

    static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Writes all of `bytes` to the program's stdin (blocking; the handshake only).
    func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            // Invariant: offset < bytes.count, so the buffer is not empty and has a base address.
            let count = bytes.withUnsafeBytes { Glibc.write(stdin, $0.baseAddress! + offset, bytes.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }
}
