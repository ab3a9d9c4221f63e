import CDescriptors
import CExitGuard
public import CSandbox
import Glibc
import Model

/// The one home for starting programs, for the process service and the plugins alike: every
/// child gets every signal at its default action, an empty signal mask, only descriptors
/// 0, 1 and 2 (every other one is closed before exec) and a process group of its own, recorded in
/// ``ProcessGroups`` so ending it (or the host) ends everything it started.
///
/// The process service's programs start with `posix_spawn`, with pipes on their stdin, stdout
/// and stderr: no Swift code runs between fork and exec (glibc's `posix_spawn` is a
/// `clone(CLONE_VFORK)` followed by the file actions and the exec, all in C). The loop only
/// prepares a start (``prepare(_:keepInputOpen:)``); ``start(_:)`` runs on a launch thread
/// (``ProgramLaunch``), since `posix_spawn` waits for the child's exec.
/// A plugin's program is confined by the kernel between fork and exec, which only C can do
/// (CSandbox): ``spawnConfined(_:group:)`` gives that child the same signals and registers its
/// group the same way; it also gets a session of its own (no controlling terminal).
public struct ProcessLauncher {
    /// The set of every signal, for `posix_spawnattr_setsigdefault`: all of them go back to their
    /// default action in the child. Filled by hand because `sigfillset` and `sigaddset` leave out
    /// the two signals glibc keeps for itself (32 and 33), which its `posix_spawn` child then sets
    /// to SIG_IGN (so every program inherited them ignored); the child reads the set's bits
    /// directly and resets those too (glibc's `spawni.c`, checked through /proc/PID/status in
    /// SpawnPolicyTests).
    static func everySignal() -> sigset_t {
        var signals = sigset_t()
        withUnsafeMutableBytes(of: &signals) { $0.initializeMemory(as: UInt8.self, repeating: 0xFF) }
        return signals
    }

    /// Starts the confined program `spec` describes (CSandbox's fork, confinement and exec),
    /// with every signal at its default action and an empty mask. With `group`, its
    /// process group is recorded in ``ProcessGroups`` under that owner's name (a plugin's); the
    /// caller then calls ``ProcessGroups/remove(_:)`` before it reaps the program. Without, the
    /// caller reaps it where ``ProcessGroups`` cannot see (C's `pclose`).
    ///
    /// - Returns: the pid, or what failed.
    public static func spawnConfined(_ spec: inout crescent_sandbox, group owner: String?) -> Result<Int32, SpawnFailure> {
        // A program gone before the host writes its pipe makes the write fail, not end the host
        // (NIO ignores SIGPIPE the same way for its pipes).
        signal(SIGPIPE, SIG_IGN)
        var message = [CChar](repeating: 0, count: 512)
        let pid = crescent_sandbox_spawn(&spec, &message, UInt(message.count))
        guard pid > 0 else {
            return .failure(SpawnFailure(step: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        if let owner { ProcessGroups.add(pid, owner: owner) }
        return .success(pid)
    }

    /// A program ready to start: what the loop checked and the pipes it made
    /// (``prepare(_:keepInputOpen:)``); ``start(_:)`` starts it, on any thread.
    struct Prepared: Sendable {
        let spec: ProcessSpec
        /// What `posix_spawn` is given: argv[0] found in PATH, or as the script gave it (a path,
        /// relative to `cwd` when it has no leading slash).
        let program: [UInt8]
        /// The host's ends: where its stdin is written (-1 when it reads `/dev/null`), and where
        /// its stdout and stderr are read.
        let input: Int32
        let output: Int32
        let errors: Int32
        /// The program's ends, closed by ``start(_:)`` once it has them (or has failed).
        fileprivate let childInput: Int32
        fileprivate let childOutput: Int32
        fileprivate let childErrors: Int32
    }

    /// A started program: its pid (also its group's id) and the descriptor that polls readable
    /// once it has exited.
    struct Started: Sendable {
        let pid: pid_t
        let exitDescriptor: Int32
    }

    /// Why a confined program did not start: the step of the child that failed and its error
    /// (`landlock: Operation not permitted`), or the fork's.
    public struct SpawnFailure: Error {
        public let step: String
    }

    /// What the loop does before `spec`'s program starts: checks its folder, finds the
    /// program and checks it can be run (so a missing or wrong one is an error of the call),
    /// and makes its pipes. `keepInputOpen` gives it a pipe on stdin even without `spec.stdin`
    /// (a spawned process, which the script writes to).
    static func prepare(_ spec: ProcessSpec, keepInputOpen: Bool) throws(ServiceError) -> Prepared {
        guard SystemCalls.pidfdOpen != nil else {
            throw ServiceError(.unavailable, "this system's C library has no pidfd_open (glibc 2.36 and Linux 5.3 are needed to watch processes)")
        }
        if let cwd = spec.cwdBytes { try checkFolder(cwd) }
        if spec.cwdBytes != nil, SystemCalls.addChdir == nil {
            throw ServiceError(.unavailable, "this system's C library cannot start a program in another folder (glibc 2.29 is needed for options.cwd)")
        }
        let program = try ProgramLookup.find(spec)
        // A program that stops reading its input (or never reads it) must make our write to its
        // pipe fail with EPIPE, not end the host by SIGPIPE; its own SIGPIPE is reset to the
        // default below (setsigdefault), so the program is not changed by this.
        signal(SIGPIPE, SIG_IGN)
        var pipes: [Int32] = []
        func pipe() throws(ServiceError) -> (read: Int32, write: Int32) {
            // A program's pipes are descriptors a script asked for: not those kept for the host.
            // Checked on the pipe itself (given back at once when it lies in the reserve), not
            // by opening and closing a descriptor before each pipe to see which comes next.
            var limit: Int32 = 0, reserve: Int32 = 0
            let ends = SystemCalls.pipe()
            let code = errno
            if let ends { pipes += [ends.read, ends.write] }
            // A full table (EMFILE) is the reserve reached too, said the same way.
            let highest = ends.map { max($0.read, $0.write) } ?? (code == EMFILE ? Int32.max : -1)
            let reserved = highest >= 0 && crescent_descriptor_in_reserve(highest, &limit, &reserve) != 0
            if reserved {
                for descriptor in pipes { close(descriptor) }
                // Below twice the reserve, the host's own descriptors take what the reserve
                // leaves: closing files cannot help (as io.open says).
                guard limit >= 2 * reserve else {
                    throw ServiceError(.io, "cannot start '\(clipped(spec.programName))': too many open files (EMFILE): the open-file limit "
                                       + "of \(limit) (ulimit -n) leaves scripts almost nothing beside the \(reserve) descriptors crescent "
                                       + "keeps for itself; raise it (ulimit -n 1024)")
                }
                throw ServiceError(.io, "cannot start '\(clipped(spec.programName))': too many open files (EMFILE): the last \(reserve) "
                                   + "of the \(limit) descriptors the open-file limit allows are kept for crescent itself; let "
                                   + "programs end, close files, or raise the limit (ulimit -n)")
            }
            guard let ends else {
                for descriptor in pipes { close(descriptor) }
                throw ServiceError(.io, "cannot start '\(clipped(spec.programName))': no pipe for its output (\(String(cString: strerror(code))))")
            }
            return ends
        }
        let input = spec.stdin != nil || keepInputOpen ? try pipe() : nil
        let output = try pipe()
        let errors = try pipe()
        // The child's ends block, as programs expect; the host's stay non-blocking.
        if let input { SystemCalls.setBlocking(input.read) }
        SystemCalls.setBlocking(output.write)
        SystemCalls.setBlocking(errors.write)
        return Prepared(spec: spec, program: program, input: input?.write ?? -1, output: output.read, errors: errors.read,
                        childInput: input?.read ?? -1, childOutput: output.write, childErrors: errors.write)
    }

    /// Starts the program `prepared` describes and records its group (``ProcessGroups``), on
    /// any thread: `posix_spawn` returns once the child has exec'd, which under load is most of
    /// a start's time, so the process service calls this off the loop (``ProgramLaunch``).
    /// Closes the program's ends of the pipes; the host's are the caller's, also on failure.
    ///
    /// - Returns: the pid and exit descriptor, or why it did not start (naming the program).
    static func start(_ prepared: Prepared) -> Result<Started, ServiceError> {
        let spec = prepared.spec
        let input = prepared.childInput
        defer {
            if input >= 0 { close(input) }
            close(prepared.childOutput)
            close(prepared.childErrors)
        }
        // Checked by prepare: it does not make a Prepared without them.
        guard let pidfdOpen = SystemCalls.pidfdOpen else { return .failure(ServiceError(.unavailable, "no pidfd_open")) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input >= 0 {
            posix_spawn_file_actions_adddup2(&actions, input, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        // dup2 clears close-on-exec on the copies the program keeps.
        posix_spawn_file_actions_adddup2(&actions, prepared.childOutput, 1)
        posix_spawn_file_actions_adddup2(&actions, prepared.childErrors, 2)
        if let addCloseFrom = SystemCalls.addCloseFrom { _ = addCloseFrom(&actions, 3) }
        if let cwd = spec.cwdBytes, let addChdir = SystemCalls.addChdir {
            _ = FilePath(bytes: cwd).withCString { addChdir(&actions, $0) }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = everySignal()
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        // The host's own environment as it is, unless options.env changes it (no copy of every
        // variable for every program).
        let changed = spec.environmentBytes.isEmpty ? nil : environmentStrings(spec.environmentBytes)
        let argv: [UnsafeMutablePointer<CChar>?] = spec.argvBytes.map(cString) + [nil]
        defer {
            for item in changed ?? [] { free(item) }
            for item in argv { free(item) }
        }
        var pid = pid_t()
        func spawn(_ environment: UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
            FilePath(bytes: prepared.program).withCString { posix_spawn(&pid, $0, &actions, &attributes, argv, environment) }
        }
        // From the child's start until its group is in the exit guard's table, a fatal signal
        // must wait for this launch (the guard's handler does, briefly), or the program would
        // outlive the host.
        var savedMask = sigset_t()
        guard crescent_exit_guard_launch_begin(&savedMask) == 0 else {
            return .failure(ServiceError(.unavailable, "cannot start '\(clipped(spec.programName))': crescent is exiting"))
        }
        let status: Int32
        if let confinedStart = spec.confinedStart {
            switch startConfined(prepared, confinedStart) {
            case .success(let started): (pid, status) = (started, 0)
            case .failure(let error):
                crescent_exit_guard_launch_end(&savedMask)
                return .failure(error)
            }
        } else {
            status = if let changed { changed.withUnsafeBufferPointer { spawn($0.baseAddress) } } else { spawn(environ) }
        }
        if status == 0 { ProcessGroups.add(pid) }
        crescent_exit_guard_launch_end(&savedMask)
        guard status == 0 else { return .failure(failure(spec, status)) }
        let exitDescriptor = pidfdOpen(pid, 0)
        guard exitDescriptor >= 0 else {
            let code = errno
            kill(-pid, SIGKILL)
            ProcessGroups.remove(pid)
            var ignored: Int32 = 0
            while waitpid(pid, &ignored, 0) == -1 && errno == EINTR {}
            return .failure(ServiceError(.io, "cannot watch '\(clipped(spec.programName))' (pidfd_open: \(String(cString: strerror(code))))"))
        }
        _ = fcntl(exitDescriptor, F_SETFD, FD_CLOEXEC)
        return .success(Started(pid: pid, exitDescriptor: exitDescriptor))
    }

    /// Starts `prepared` through `confinedStart` (``ProcessSpec/confinedStart``): its pipes (or
    /// /dev/null for stdin), its folder, and the host's environment with the spec's changes, as
    /// text.
    private static func startConfined(_ prepared: Prepared,
                                      _ confinedStart: @Sendable (ConfinedStart) -> Result<Int32, ServiceError>) -> Result<Int32, ServiceError> {
        let spec = prepared.spec
        let null = prepared.childInput >= 0 ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if null >= 0 { close(null) } }
        var environment: [String] = []
        var entry = environ
        // Bounded: environ ends with a null pointer.
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            let name = String(text.prefix { $0 != "=" })
            if !spec.environmentBytes.keys.contains(name) { environment.append(text) }
            entry += 1
        }
        for (name, value) in spec.environmentBytes {
            if let value { environment.append(name + "=" + String(decoding: value, as: UTF8.self)) }
        }
        return confinedStart(ConfinedStart(
            program: String(decoding: prepared.program, as: UTF8.self),
            arguments: spec.argvBytes.dropFirst().map { String(decoding: $0, as: UTF8.self) },
            environment: environment, directory: spec.cwd,
            stdin: prepared.childInput >= 0 ? prepared.childInput : null, stdout: prepared.childOutput, stderr: prepared.childErrors))
    }

    /// `bytes` as a C string made by strndup (freed with free), as strdup gives one for text;
    /// the spec holds no NUL, so the whole of `bytes` is copied. Nil only without memory.
    private static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                // An empty array may have no storage.
                guard let base = characters.baseAddress else { return strdup("") }
                return strndup(base, characters.count)
            }
        }
    }

    /// A missing or wrong `cwd` named as such (posix_spawn would answer ENOENT, as for a
    /// missing program).
    private static func checkFolder(_ folder: [UInt8]) throws(ServiceError) {
        let path = ByteText.shown(folder)
        let name = FilePath(bytes: folder)
        var status = stat()
        guard name.withCString({ stat($0, &status) }) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw ServiceError(.notFound, "cwd '\(clipped(path))' does not exist") }
            throw ServiceError(code == EACCES ? .permission : .io, "cwd '\(clipped(path))': \(String(cString: strerror(code)))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw ServiceError(.invalidArgument, "cwd '\(clipped(path))' is not a folder")
        }
        // A folder the user may not enter made posix_spawn answer EACCES, which read as the
        // program's fault.
        guard name.withCString({ access($0, X_OK) }) == 0 else {
            throw ServiceError(.permission, "cwd '\(clipped(path))' cannot be entered: permission denied")
        }
    }

    /// Why a program did not start, naming it.
    static func failure(_ spec: ProcessSpec, _ code: Int32) -> ServiceError {
        let program = clipped(spec.programName)
        switch code {
        case ENOENT where spec.argv[0].contains("/"):
            let chain = interpreterChain(spec.argv[0], in: spec.cwd)
            if let missing = chain.last, chain.count == 1 {
                return ServiceError(.notFound, "program '\(program)' names an interpreter that does not exist on its first line: #!\(clipped(missing))")
            } else if let missing = chain.last {
                let through = chain.dropLast().map { "'\(clipped($0))'" }.joined(separator: ", then ")
                return ServiceError(.notFound, "program '\(program)' runs through the script \(through), whose first line names an interpreter "
                                    + "that does not exist: #!\(clipped(missing))")
            }
            return ServiceError(.notFound, "program '\(program)' does not exist")
        case ENOENT:
            return ServiceError(.notFound, "program '\(program)' was not found in PATH")
        case EACCES, EPERM:
            return ServiceError(.permission, "program '\(program)' is not executable (or a folder on its path cannot be searched)")
        case ENOEXEC:
            return ServiceError(.invalidArgument, "program '\(program)' is not a program this system can run")
        case EISDIR:
            return ServiceError(.invalidArgument, "program '\(program)' is a folder")
        case EAGAIN:
            return ServiceError(.io, "cannot start '\(program)': \(String(cString: strerror(code))): " + processLimitText)
        default:
            return ServiceError(.io, "cannot start '\(program)': \(String(cString: strerror(code)))")
        }
    }

    /// What an EAGAIN from a start means: the user's process limit (which counts their threads
    /// too), or the system's when the user has none.
    static var processLimitText: String {
        guard let limit = ThreadShortage.soft(__RLIMIT_NPROC) else {
            return "the system is out of processes or threads (kernel.threads-max, kernel.pid_max); wait for programs to end"
        }
        return "the process limit is \(limit) (ulimit -u, RLIMIT_NPROC), and it counts every process and thread "
            + "of this user; wait for programs to end, or raise it (ulimit -u)"
    }

    /// For a program that exists but whose start said ENOENT: the interpreters its `#!` line
    /// leads through, the last the missing one (the kernel's ENOENT is for it, not for the
    /// script); empty when it has no `#!` line.
    private static func interpreterChain(_ program: String, in cwd: String?) -> [String] {
        var chain: [String] = []
        var script = program
        // The kernel follows at most four `#!` levels (BINPRM_MAX_RECURSION); so does this.
        while chain.count < 5, let interpreter = firstLineInterpreter(script, in: cwd) {
            chain.append(interpreter)
            guard access(resolved(interpreter, in: cwd), F_OK) == 0 else { return chain }
            script = interpreter
        }
        // Every interpreter exists (deeper than the kernel follows, or a loader missing): the
        // first line is still what to look at.
        return chain.prefix(1).map { $0 }
    }

    /// `path` as the child resolves it: relative ones from its working folder.
    private static func resolved(_ path: String, in cwd: String?) -> String {
        path.hasPrefix("/") || cwd == nil ? path : cwd.map { $0 + "/" + path } ?? path
    }

    /// The interpreter `program`'s `#!` line names; nil when it has none.
    private static func firstLineInterpreter(_ program: String, in cwd: String?) -> String? {
        let path = resolved(program, in: cwd)
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var line = [UInt8](repeating: 0, count: 256)
        let count = fread(&line, 1, line.count, file)
        guard count > 2, line[0] == UInt8(ascii: "#"), line[1] == UInt8(ascii: "!") else { return nil }
        let text = line[2..<count].prefix { $0 != UInt8(ascii: "\n") }
        let interpreter = String(decoding: text, as: UTF8.self).trimmingPrefix { $0 == " " || $0 == "\t" }
        return String(interpreter.prefix { $0 != " " && $0 != "\t" && $0 != "\r" })
    }

    /// The host's environment with `changes` applied, as `NAME=value` C strings and a nil.
    private static func environmentStrings(_ changes: [String: [UInt8]?]) -> [UnsafeMutablePointer<CChar>?] {
        var strings: [UnsafeMutablePointer<CChar>?] = []
        var entry = environ
        while let pointer = entry.pointee {
            entry += 1
            if !changes.isEmpty {
                let text = String(cString: pointer)
                if let equals = text.firstIndex(of: "="), changes[String(text[..<equals])] != nil { continue }
            }
            strings.append(strdup(pointer))
        }
        for (name, value) in changes {
            guard let value else { continue }
            strings.append(cString(Array("\(name)=".utf8) + value))
        }
        return strings + [nil]
    }
}
