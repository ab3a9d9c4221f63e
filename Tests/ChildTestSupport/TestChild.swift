public import Glibc
import Synchronization

/// A program a test starts, waited for by its own pid: the one home for starting children in
/// the tests (the `crescent` runs, tmux, PostgreSQL's tools).
///
/// It starts with `posix_spawn`, with every signal at its default action and none blocked (the
/// Swift concurrency threads a test runs on block most signals, and a child inherits its
/// thread's mask: SIGTERM would stay pending), only the descriptors it is given (everything
/// else is closed before exec), and optionally a folder and a process group of its own. Its end
/// is read with `waitpid` on its pid: Foundation's `Process.isRunning` depends on Foundation
/// noticing SIGCHLD, and once missed an exit for 30 s.
///
/// ```swift
/// let child = try TestChild("/usr/bin/env", ["true"])
/// let ending = child.wait(seconds: 10)   // .exited(0)
/// ```
public final class TestChild: Sendable {
    /// How a child ended.
    public enum Ending: Equatable, Sendable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it (SIGSEGV, a Swift trap's SIGILL, a test's SIGKILL).
        case signaled(Int32)

        public init(waitStatus status: Int32) {
            self = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
        }

        /// The exit status, or the signal's number (as a shell's `$?` would say, less 128).
        public var status: Int32 {
            switch self {
            case .exited(let status), .signaled(let status): status
            }
        }

        public var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signaled(let signal): "killed by signal \(signal)"
            }
        }
    }

    /// What one of the child's descriptors 0, 1 and 2 is.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A copy of this descriptor (a pipe's end, say); the streams are set in order, so for
        /// stderr, 1 is what stdout became.
        case descriptor(Int32)
        /// This file: read for stdin; created or truncated for output.
        case file(String)
    }

    /// Why a child did not start: posix_spawn's error number (`ETXTBSY` for a script another
    /// child held open for writing at that instant).
    public struct SpawnError: Error, CustomStringConvertible {
        public let code: Int32
        public let program: String
        public var description: String { "cannot start \(program): \(String(cString: strerror(code)))" }
    }

    public let pid: pid_t
    /// Its ending once reaped; `waitpid` on this pid runs only under this lock, so the pid is
    /// never signalled after it may name another process.
    private let ending = Mutex<Ending?>(nil)

    /// Starts `program` (a path) with `arguments`; `environment` nil passes the test's own.
    public init(_ program: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
                stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null,
                processGroup: Bool = false) throws(SpawnError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            }
        }
        if let addCloseFrom = Self.addCloseFrom { _ = addCloseFrom(&actions, 3) }
        if let directory {
            guard let addChdir = Self.addChdir else { throw SpawnError(code: ENOSYS, program: program) }
            _ = directory.withCString { addChdir(&actions, $0) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        if processGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp ?? [] { free(pointer) }
        }
        var pid: pid_t = 0
        let status = if let envp { posix_spawn(&pid, program, &actions, &attributes, argv, envp) }
                     else { posix_spawn(&pid, program, &actions, &attributes, argv, environ) }
        guard status == 0 else { throw SpawnError(code: status, program: program) }
        self.pid = pid
    }

    /// A child still running when the value goes away is killed and reaped (for at most 5 s):
    /// no test leaves a zombie behind for a later test's check of this process's children.
    deinit {
        guard end == nil else { return }
        kill(pid, SIGKILL)
        _ = wait(seconds: 5)
    }

    /// How it ended, reaping it with `waitpid` on its pid if it has; nil while it runs. Never
    /// blocks.
    public var end: Ending? {
        ending.withLock { ending in
            if let ending { return ending }
            var status: Int32 = 0
            while true {
                let done = waitpid(pid, &status, WNOHANG)
                if done == pid {
                    ending = Ending(waitStatus: status)
                    return ending
                }
                if done == 0 { return nil }
                if errno != EINTR {
                    // Not our child (reaped elsewhere): nothing more can be known.
                    ending = .exited(-1)
                    return ending
                }
            }
        }
    }

    /// True until it has ended.
    public var isRunning: Bool { end == nil }

    /// Waits up to `seconds` for it to end (polling every 2 ms, so a test thread is not held
    /// by a blocking wait); nil when it still runs then.
    public func wait(seconds: Double) -> Ending? {
        let deadline = Self.now() + seconds
        while true {
            if let end { return end }
            if Self.now() >= deadline { return nil }
            usleep(2_000)
        }
    }

    /// Waits, however long it takes, for it to end.
    public func waitUntilEnded() -> Ending {
        while true {
            if let end { return end }
            usleep(2_000)
        }
    }

    /// Sends `signal` to it (to its group with `group`), unless it was reaped already.
    public func signal(_ signal: Int32, group: Bool = false) {
        ending.withLock { ending in
            guard ending == nil else { return }
            kill(group ? -pid : pid, signal)
        }
    }

    /// Seconds on the monotonic clock.
    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// `posix_spawn_file_actions_addchdir_np` and `…_addclosefrom_np` (glibc 2.29 and 2.34),
    /// which Swift's Glibc module does not show; found by name.
    private static let addChdir: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32)? =
        symbol("posix_spawn_file_actions_addchdir_np")
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        symbol("posix_spawn_file_actions_addclosefrom_np")

    private static func symbol<Function>(_ name: String) -> Function? {
        guard let library = dlopen(nil, RTLD_NOW), let address = dlsym(library, name) else { return nil }
        return unsafeBitCast(address, to: Function.self)
    }
}
