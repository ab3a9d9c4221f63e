import CSandbox
import Model
import Services
#if canImport(Glibc)
import Glibc
#endif

/// What a Lua plugin's `services.process` and `services.files` may reach: its grants, by the same
/// rule its wrapped `io` and `os` follow (``reach(_:write:extraRead:)``: paths resolved with
/// their links before the check, `..` unable to escape, its own folder readable, its data folder
/// writable), and the programs its `exec` names.
extension PluginSandbox {
    /// The access the plugin's process and files services are made with; `warn` writes each
    /// refusal to the host's log (from any thread).
    func serviceAccess(warn: @escaping @Sendable (String) -> Void) -> ServiceAccess {
        ServiceAccess(checkRun: { spec throws(ServiceError) in
            switch self.program(for: spec) {
            case .success(let checked): return checked
            case .failure(let error):
                if error.code == .permission { warn(error.description) }
                throw error
            }
        }, checkPath: { path, use throws(ServiceError) in
            switch self.servicePath(path, use) {
            case .success(let reached): return reached
            case .failure(let error):
                warn(error.description)
                throw error
            }
        })
    }

    /// The path the files service reaches for `bytes` used as `use`: resolved (a relative path
    /// from the plugin's folder), or the refusal.
    func servicePath(_ bytes: [UInt8], _ use: ServiceAccess.PathUse) -> Result<[UInt8], ServiceError> {
        // An empty path reaches nothing: the service says so, as it does to scripts.
        if bytes.isEmpty { return .success(bytes) }
        guard let path = String(validating: bytes, as: UTF8.self) else {
            // Checked as text, reached as bytes: a name that is not UTF-8 would be another file.
            return .failure(Self.refusal("plugin '\(plugin)' may not use a path that is not UTF-8 text: \(ByteText.shown(bytes))"))
        }
        let access: Access
        switch use {
        case .read: access = reach(path, write: false)
        case .write: access = reach(path, write: true)
        case .entry:
            // The entry itself (a link described, not followed) where it lies; `.` and `..`
            // name a folder, taken resolved.
            let last = path.split(separator: "/").last ?? ""
            access = last == "." || last == ".." ? reach(path, write: false) : place(path, write: false).0
        }
        switch access {
        case .refused(let message): return .failure(Self.refusal(message))
        case .granted(_, let resolved):
            // A link that leads nowhere resolves to itself, inside the grant; a write through it
            // would make its target, wherever it points.
            var status = stat()
            if use == .write, lstat(resolved, &status) == 0, status.st_mode & S_IFMT == S_IFLNK {
                return .failure(Self.refusal("plugin '\(plugin)' may not write \(path): it is a link to a file that does not exist, which a write would make wherever the link points"))
            }
            return .success(Array(resolved.utf8))
        }
    }

    /// `spec` as the plugin may run it: in its folder unless `cwd` names a folder it may read,
    /// with only its granted environment variables and a plain `PATH`, its program the file of a
    /// granted `exec` entry; or the refusal.
    func program(for spec: ProcessSpec) -> Result<ProcessSpec, ServiceError> {
        var checked = spec
        let name = plugin
        let grant = "add it to [permissions] exec in its plugin.toml, then run crescent plugins allow \(name)"
        // Its programs run in its folder, as io.popen's and a process plugin's do: the same
        // relative paths wherever crescent was started.
        var cwd = folder
        if let given = spec.cwdBytes {
            guard let text = String(validating: given, as: UTF8.self) else {
                return .failure(Self.refusal("plugin '\(name)' may not use a cwd that is not UTF-8 text: \(ByteText.shown(given))"))
            }
            switch reach(text, write: false) {
            case .refused(let message):
                let refused = Self.refusal(message)
                return .failure(ServiceError(.permission, refused.message + "; it is the folder options.cwd names"))
            case .granted(_, let resolved): cwd = resolved
            }
        }
        checked.cwd = cwd
        let granted = permissions.exec.compactMap { entry in
            Self.program(entry, folder: folder, path: Self.confinedPath).map { (entry: entry, file: Self.resolve($0)) }
        }
        let file: String
        if spec.shell {
            // `shell = true` runs /bin/sh -c LINE: the program is sh, which runs any command.
            let shell = Self.resolve("/bin/sh")
            guard granted.contains(where: { $0.file == shell }) else {
                return .failure(Self.refusal("plugin '\(name)' may not run a command line with shell = true: the shell is the program sh, which is not granted "
                                             + "(add \"sh\" to [permissions] exec in its plugin.toml, then run crescent plugins allow \(name); "
                                             + "sh runs any command, so granting it grants every program; or pass the program and its arguments as an array, without shell)"))
            }
            file = shell
        } else {
            let program = spec.argv[0]
            if program.contains("/") {
                // A path: it must be the file a granted entry names (links and `..` resolved).
                let resolved = Self.resolve(program.hasPrefix("/") ? program : cwd + "/" + program)
                guard granted.contains(where: { $0.file == resolved }) else {
                    let shown = resolved == program ? program : "\(program) (that is \(resolved))"
                    return .failure(Self.refusal("plugin '\(name)' may not run \(shown): it is not a program its exec grants (\(grant))"))
                }
                file = resolved
            } else {
                guard permissions.exec.contains(program) else {
                    return .failure(Self.refusal("plugin '\(name)' may not run '\(program)': not granted (\(grant))"))
                }
                // Found where its grant was shown found (not in options.env's PATH, nor the host's).
                guard let found = granted.first(where: { $0.entry == program }) else {
                    return .failure(ServiceError(.notFound, "program '\(program)' (granted to plugin '\(name)') was not found on \(Self.confinedPath)"))
                }
                file = found.file
            }
        }
        // Confined, the program gets its arguments and variables as text.
        if let word = spec.argvBytes.first(where: { String(validating: $0, as: UTF8.self) == nil })
            ?? spec.environmentBytes.values.compactMap({ $0 }).first(where: { String(validating: $0, as: UTF8.self) == nil }) {
            return .failure(Self.refusal("plugin '\(name)' may not pass a program bytes that are not UTF-8 text: \(ByteText.shown(word))"))
        }
        checked.programFile = Array(file.utf8)
        // Run as io.popen's programs are: confined by the kernel to the plugin's grants.
        checked.confinedStart = { start in self.startConfined(start) }
        // Only the granted variables reach the program (DESIGN.md: `env`), and PATH, plain; what
        // options.env sets is the plugin's own.
        var environment: [String: [UInt8]?] = [:]
        var entry = environ
        // Bounded: environ ends with a null pointer.
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                let variable = String(text[..<equals])
                if !permissions.env.contains(variable) { environment[variable] = .some(nil) }
            }
            entry += 1
        }
        environment["PATH"] = .some(Array(Self.confinedPath.utf8))
        checked.environmentBytes = environment.merging(spec.environmentBytes) { _, given in given }
        return .success(checked)
    }

    /// A refusal as the services answer it: `permission`, the message without its code.
    private static func refusal(_ message: String) -> ServiceError {
        let prefix = "permission: "
        return ServiceError(.permission, message.hasPrefix(prefix) ? String(message.dropFirst(prefix.count)) : message)
    }

    /// Starts `start` under the plugin's confinement (``confine(_:program:opened:strings:)``),
    /// from the file the host opened and checked, as its `io.popen` does.
    func startConfined(_ start: ConfinedStart) -> Result<Int32, ServiceError> {
        let refusedRun = "plugin '\(plugin)' may not run \(start.program)"
        guard Self.landlockABI() > 0 else {
            return .failure(ServiceError(.permission, "\(refusedRun): the kernel offers no Landlock to confine it (Linux 5.13 or later, with Landlock enabled)"))
        }
        let opened: OpenedProgram
        switch OpenedProgram.open(start.program) {
        case .opened(let file): opened = file
        case .loader(let shown): return .failure(ServiceError(.permission, "\(refusedRun): it names \(shown), \(PluginExecEntry.loaderRefusal)"))
        case .refused(let reason): return .failure(ServiceError(.permission, "\(refusedRun): \(reason)"))
        case .failed(let reason): return .failure(ServiceError(.io, "cannot start \(start.program): \(reason)"))
        }
        defer { opened.close() }
        let strings = CStrings()
        defer { strings.free() }
        var spec = crescent_sandbox()
        spec.program = strings.constant(start.program)
        // A `#!` script runs from the interpreter the host opened, the script as /dev/fd/N.
        spec.argv = UnsafePointer(strings.list((opened.isScript ? opened.leadingArguments : [start.program]) + start.arguments))
        spec.envp = UnsafePointer(strings.list(start.environment))
        spec.directory = strings.constant(start.directory ?? folder)
        (spec.stdin_fd, spec.stdout_fd, spec.stderr_fd) = (start.stdin, start.stdout, start.stderr)
        confine(&spec, program: start.program, opened: opened, strings: strings)
        switch ProcessLauncher.spawnConfined(&spec, group: nil) {
        case .success(let pid): return .success(pid)
        case .failure(let failure): return .failure(ServiceError(.io, "cannot start \(start.program) in its sandbox: \(failure.step)"))
        }
    }
}
