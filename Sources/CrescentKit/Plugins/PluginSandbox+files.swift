import CSandbox
#if canImport(Glibc)
import Glibc
#endif

/// A Lua plugin's file operations, made so that the file checked is the file reached: each starts
/// from a descriptor of the granted folder the path lies in, and the kernel refuses, during the
/// open itself, any step (a link swapped in since the check) that would leave that folder
/// (CSandbox's `crescent_open_beneath`). Nothing outside a grant is opened, created, truncated,
/// removed or renamed, whatever another process changes meanwhile.
extension PluginSandbox {
    /// What an operation answers: a descriptor (or 0), a refusal, or the system's error.
    enum Outcome: Equatable {
        case done(Int32)
        /// Not granted: raised in the plugin, warned in the log.
        case refused(String)
        /// The system's answer, as `io.open` gives it: `path: message` and errno.
        case failed(String, Int32)
    }

    /// Opens `path` as `io.open`'s `mode` (`r`, `w`, `a`, with `+`; `b` ignored) says.
    func open(_ path: String, mode: String) -> Outcome {
        let update = mode.contains("+")
        let flags: Int32 = switch mode.first {
        case "w": (update ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC
        case "a": (update ? O_RDWR : O_WRONLY) | O_CREAT | O_APPEND
        default: update ? O_RDWR : O_RDONLY
        }
        let access = self.reach(path, write: mode.first != "r" || update, extraRead: LuaPluginRuntime.luaModuleFolders)
        guard case .granted(let root, _) = access, let relative = access.relative else { return refused(access) }
        // O_NONBLOCK: the open of a FIFO waits in the kernel until the other end comes, on the
        // host's loop, where neither call_timeout nor Ctrl-C reaches (a plugin can make one in its
        // data folder with any program it may run). A FIFO or socket is refused; what else opened
        // gets its blocking reads and writes back.
        let opened = crescent_open_beneath(root, relative, flags | O_NONBLOCK | O_NOCTTY, 0o666)
        let notRegular = { (what: String) in
            Outcome.failed("\(path): is \(what), which a plugin may not open (its open and reads could wait without end, holding the host); use a regular file", EINVAL)
        }
        // A FIFO without a reader answers a non-blocking open for writing with ENXIO.
        if opened == -ENXIO { return notRegular("a FIFO (named pipe) or a device without its other end") }
        guard opened >= 0 else { return outcome(opened, path: path, write: flags & O_ACCMODE != O_RDONLY) }
        var status = stat()
        let kind = fstat(opened, &status) == 0 ? status.st_mode & S_IFMT : 0
        if kind == S_IFIFO || kind == S_IFSOCK {
            Glibc.close(opened)
            return notRegular(kind == S_IFIFO ? "a FIFO (named pipe)" : "a socket")
        }
        _ = fcntl(opened, F_SETFL, fcntl(opened, F_GETFL) & ~O_NONBLOCK)
        return .done(opened)
    }

    /// `io.tmpfile`: an unnamed file (`O_TMPFILE`) in the plugin's data folder, read and
    /// written, gone when closed. Lua's own made it in `/tmp`, outside every folder the plugin
    /// may write, with no bound but the disk.
    func temporaryFile() -> Outcome {
        // O_TMPFILE as Linux defines it (__O_TMPFILE | O_DIRECTORY); Glibc's macro does not import.
        let temporary: Int32 = 0o20_000_000 | O_DIRECTORY
        let opened = crescent_open_beneath(dataFolder, ".", temporary | O_RDWR | O_NOCTTY, 0o600)
        return opened >= 0 ? .done(opened) : outcome(opened, path: "io.tmpfile() in \(dataFolder)", write: true)
    }

    /// Removes the file (or empty folder) `path`, as `os.remove`: the last component itself,
    /// a link not followed.
    func remove(_ path: String) -> Outcome {
        let (access, relative) = place(path)
        guard case .granted(let root, _) = access, let relative else { return refused(access) }
        return outcome(crescent_remove_beneath(root, relative), path: path, write: true)
    }

    /// Renames `from` to `to`, as `os.rename`.
    func rename(_ from: String, to: String) -> Outcome {
        let (source, fromRelative) = place(from)
        guard case .granted(let fromRoot, _) = source, let fromRelative else { return refused(source) }
        let (target, toRelative) = place(to)
        guard case .granted(let toRoot, _) = target, let toRelative else { return refused(target) }
        return outcome(crescent_rename_beneath(fromRoot, fromRelative, toRoot, toRelative), path: from, write: true)
    }

    /// Where the last component of `path` lies (its folder resolved, itself not followed):
    /// refused when that folder is not writable (readable, when not `write`). What a link there
    /// leads to does not count (the link itself is removed, renamed or described, never its
    /// target): a Lua plugin could not remove a link to a folder outside its grants from its own
    /// data folder.
    func place(_ path: String, write wants: Bool = true) -> (Access, String?) {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let slash = trimmed.lastIndex(of: "/")
        let folder = slash.map { $0 == trimmed.startIndex ? "/" : String(trimmed[..<$0]) } ?? "."
        let last = slash.map { String(trimmed[trimmed.index(after: $0)...]) } ?? String(trimmed)
        let parent = reach(folder, write: wants)
        guard case .granted(let root, let resolved) = parent else {
            // The refusal names the path asked for where that is refused too, not only its folder.
            let named = reach(path, write: wants)
            if case .refused = named { return (named, nil) }
            return (parent, nil)
        }
        let place = Access.granted(root: root, resolved: resolved == "/" ? "/" + last : resolved + "/" + last)
        return (place, place.relative)
    }

    private func refused(_ access: Access) -> Outcome {
        if case .refused(let message) = access { return .refused(message) }
        return .failed("not granted", EACCES)
    }

    private func outcome(_ result: Int32, path: String, write: Bool) -> Outcome {
        if result >= 0 { return .done(result) }
        let code = -result
        if code == EXDEV {
            let field = write ? "write" : "read"
            return .refused("permission: plugin '\(plugin)' may not \(field) \(path): it leads outside the folders it may \(field) (a link in it changed as it was opened)")
        }
        if code == ENOSYS {
            return .failed("\(path): the kernel cannot open files beneath a folder (openat2, Linux 5.6 or later), which a Lua plugin's files need", code)
        }
        return .failed("\(path): \(String(cString: strerror(code)))", code)
    }
}
