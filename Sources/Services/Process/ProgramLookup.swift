import Glibc
import Model

/// Where a program is, found on the loop before it starts (``ProcessLauncher/prepare(_:keepInputOpen:)``):
/// the start itself runs off the loop (``ProgramLaunch``), so the common reasons a program cannot
/// start (it is not there, not executable, a folder) are found here and are errors of the call
/// that names it, with the messages the start's own failure gives. What only the exec can tell
/// (a `#!` interpreter that is missing, a file that is no program, no memory) comes later, as
/// the program's end.
///
/// A name without a slash is looked up in PATH as `execvp` does: options.env's PATH when it sets
/// or removes one (as `execvpe` and Python's `subprocess` do; posix_spawnp looked in the host's,
/// so `env = { PATH = "/nonexistent" }` still ran /usr/bin/ls), else the host's; without either,
/// the C library's default, `/bin:/usr/bin`. A relative folder, or a relative program path, is
/// taken from `cwd`, where the program starts.
enum ProgramLookup {
    private static let slash = UInt8(ascii: "/")
    private static let defaultPath = Array("/bin:/usr/bin".utf8)

    /// What to give `posix_spawn` for `spec`'s argv[0].
    ///
    /// - Throws: `not_found` or `permission` naming the program, as its start would have.
    static func find(_ spec: ProcessSpec) throws(ServiceError) -> [UInt8] {
        if let file = spec.programFile {
            let code = check(file, in: nil)
            guard code == 0 else { throw ProcessLauncher.failure(spec, code) }
            return file
        }
        let name = spec.argvBytes.first ?? []
        if name.contains(slash) {
            let code = check(name, in: spec.cwdBytes)
            guard code == 0 else { throw ProcessLauncher.failure(spec, code) }
            return name
        }
        let given = spec.environmentBytes["PATH"]
        let path = given.map { $0 ?? defaultPath } ?? getenv("PATH").map { Array(String(cString: $0).utf8) } ?? defaultPath
        var denied = false
        for folder in path.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false) {
            let candidate = (folder.isEmpty ? [UInt8(ascii: ".")] : Array(folder)) + [slash] + name
            let code = check(candidate, in: spec.cwdBytes)
            if code == 0 { return candidate }
            // As execvp: a file found but not executable is the answer if nothing else is.
            if code == EACCES { denied = true }
        }
        if given != nil {
            throw ServiceError(.notFound, "program '\(clipped(spec.programName))' was not found in options.env's PATH ('\(clipped(ByteText.shown(path), limit: 60))')")
        }
        throw ProcessLauncher.failure(spec, denied ? EACCES : ENOENT)
    }

    /// 0 when `program` (relative to `cwd` unless it starts with a slash) is a file this process
    /// may execute, else the error `execve` would give (ENOENT, ENOTDIR, EACCES).
    private static func check(_ program: [UInt8], in cwd: [UInt8]?) -> Int32 {
        let full = if let cwd, program.first != slash { cwd + [slash] + program } else { program }
        return FilePath(bytes: full).withCString { path in
            var status = stat()
            guard stat(path, &status) == 0 else { return errno }
            // execve answers EACCES for a folder or anything else that is not a regular file.
            guard status.st_mode & S_IFMT == S_IFREG else { return EACCES }
            return access(path, X_OK) == 0 ? 0 : errno
        }
    }
}
