#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the REPL's history lives between sessions, and reading and writing it.
///
/// The file is `$CRESCENT_HISTORY` when that is set (set to the empty string or `/dev/null`, it
/// turns saving off, as `NODE_REPL_HISTORY` does for Node), else `$XDG_DATA_HOME/crescent/history`, else
/// `~/.local/share/crescent/history`. Missing directories are created (mode 0700) and the file is
/// private (0600): history can hold secrets.
///
/// Writes are atomic: the new contents go to a temporary file in the same directory that then
/// replaces the old one with `rename(2)`, so a crash or a full disk never leaves a half-written
/// history. ``append(_:capacity:)`` re-reads the file first, so two sessions open at once both
/// keep their entries (the later one's last, each capped to the newest ``History/capacity``).
/// Only a regular file of the user's own (or a path where nothing is yet) is read or written:
/// `/dev/null`, a device, a FIFO, a folder, a symbolic link (never followed: one planted there
/// would have had every entry appended to the file it points to) or another user's file is left
/// alone (``unusableReason`` says why, and the REPL keeps its history in memory); a replaced
/// file keeps its mode. Only the file's end is read, back to the newest entries a history keeps
/// (at most ``maximumBytes``), so a file grown large elsewhere costs no more than one of the
/// right size, and a write keeps it within that size.
/// The format is described in `HistoryFile+format.swift`.
///
/// ```swift
/// if let file = HistoryFile.standard() {
///     var history = file.load()           // never throws: missing or corrupt gives what it can
///     history.add("print('hi')")
///     try file.append("print('hi')")      // after each submitted chunk
/// }
/// ```
public struct HistoryFile: Hashable, Sendable {
    /// The file's path.
    public let path: String

    /// The history file at `path`.
    public init(path: String) {
        self.path = path
    }

    /// The history file of the environment (see the type's description), or nil when saving is
    /// turned off or there is no home directory.
    ///
    /// - Parameter environment: looks a variable up; the process environment by default.
    public static func standard(environment: (String) -> String? = HistoryFile.processEnvironment) -> HistoryFile? {
        if let configured = environment("CRESCENT_HISTORY") {
            // `/dev/null` is a common way to say "no history": take it as that, without a warning.
            return configured.isEmpty || configured == "/dev/null" ? nil : HistoryFile(path: configured)
        }
        if let data = environment("XDG_DATA_HOME"), data.hasPrefix("/") {
            return HistoryFile(path: join(data, "crescent/history"))
        }
        guard let home = environment("HOME") ?? HistoryFile.passwordHome(), !home.isEmpty else { return nil }
        return HistoryFile(path: join(home, ".local/share/crescent/history"))
    }

    /// The process environment's value for `name`.
    public static func processEnvironment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The most of a history file read, from its end, and the most written: far more than
    /// ``History/defaultCapacity`` entries of any sensible length, and a bound on the memory and
    /// time a wrong or foreign file can cost.
    public static let maximumBytes = 16 << 20

    /// Why the path cannot hold a history (it is a device, a FIFO, a folder, a symbolic link,
    /// another user's file…), or nil when it is a regular file of the user's or nothing is there yet.
    public var unusableReason: String? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return HistoryFile.unusableReason(status)
    }

    private static func unusableReason(_ status: stat) -> String? {
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            // Another user's file (in a shared folder) is theirs to read, not ours to fill.
            return status.st_uid == geteuid() ? nil : "it belongs to another user (uid \(status.st_uid))"
        case S_IFLNK: return "it is a symbolic link (never followed: set CRESCENT_HISTORY to the file itself)"
        case S_IFDIR: return "it is a folder"
        case S_IFIFO: return "it is a FIFO"
        case S_IFCHR, S_IFBLK: return "it is a device"
        case S_IFSOCK: return "it is a socket"
        default: return "it is not a regular file"
        }
    }

    /// The entries in the file, filtered and capped like ``History/add(_:)``; empty when the file
    /// is missing or unreadable.
    public func load(capacity: Int = History.defaultCapacity) -> History {
        History(readEntries(newest: capacity), capacity: capacity)
    }

    /// Replaces the file's contents with `history`'s entries: the newest that fit in
    /// ``maximumBytes``, so the next read sees them all.
    public func save(_ history: History) throws(HistoryFileError) {
        try writeAtomically(HistoryFile.encode(Array(HistoryFile.newest(of: history.entries, within: HistoryFile.maximumBytes))))
    }

    /// The newest of `entries` whose lines in the file take at most `bytes` together.
    package static func newest(of entries: [String], within bytes: Int) -> ArraySlice<String> {
        var total = 0
        var start = entries.endIndex
        while start > entries.startIndex {
            let size = encode([entries[start - 1]]).utf8.count
            guard total + size <= bytes else { break }
            total += size
            start -= 1
        }
        return entries[start...]
    }

    /// Adds `entry` to the entries in the file now (written by any session) and writes them back,
    /// capped to `capacity`. Returns false, writing nothing, when ``History/add(_:)`` would skip
    /// the entry (blank, or equal to the newest one).
    @discardableResult
    public func append(_ entry: String, capacity: Int = History.defaultCapacity) throws(HistoryFileError) -> Bool {
        var history = History(readEntries(newest: capacity), capacity: capacity)
        guard history.add(entry) else { return false }
        try save(history)
        return true
    }

    // MARK: - File access

    /// The entries at the file's end: read backwards in chunks until it holds `count` whole
    /// lines past the first (which may begin mid-entry, and is dropped unless the read reached
    /// the file's start), the file's start, or ``maximumBytes``.
    private func readEntries(newest count: Int) -> [String] {
        // Non-blocking, so a FIFO does not wait for a writer before fstat can refuse it; a
        // symbolic link is not followed (the open fails).
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, HistoryFile.unusableReason(status) == nil else { return [] }
        let size = Int(status.st_size)
        var start = size
        var chunks: [[UInt8]] = []
        var newlines = 0
        while start > 0, size - start < HistoryFile.maximumBytes, newlines <= count {
            let length = min(1 << 16, start, HistoryFile.maximumBytes - (size - start))
            var chunk = [UInt8](repeating: 0, count: length)
            var filled = 0
            while filled < length {
                let got = chunk.withUnsafeMutableBytes { buffer in
                    buffer.baseAddress.map { pread(descriptor, $0 + filled, length - filled, off_t(start - length + filled)) } ?? 0
                }
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { break }
                filled += got
            }
            // The file shrank under the read (another session replaced it in place): what was read stands.
            guard filled == length else { break }
            start -= length
            newlines += chunk.reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            chunks.append(chunk)
        }
        var bytes = Array(chunks.reversed().joined())
        if start > 0 {
            // The read began inside a line: the entry it is the end of is not whole.
            bytes = bytes.firstIndex(of: UInt8(ascii: "\n")).map { Array(bytes[($0 + 1)...]) } ?? []
        }
        return HistoryFile.decode(bytes)
    }

    private func writeAtomically(_ contents: String) throws(HistoryFileError) {
        // The path itself, never what a link there points to: `rename` below replaces a link
        // planted after this check, never the file it names.
        let target = path
        var status = stat()
        let exists = lstat(target, &status) == 0
        // Renaming over a device or a FIFO would replace it (`/dev/null` became a regular file).
        if exists, let reason = HistoryFile.unusableReason(status) { throw .notRegular(path, reason: reason) }
        let directory = HistoryFile.directory(of: target)
        try createDirectories(directory)
        let temporary = join(directory, ".\(HistoryFile.fileName(of: target)).\(getpid()).tmp")
        unlink(temporary)  // a leftover of a crashed session with the same pid
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .write(path, code: errno) }
        // The new file takes the old one's mode: a user who chose other permissions keeps them.
        if exists { _ = fchmod(descriptor, status.st_mode & 0o7777) }
        var failure: Int32?
        var bytes = Array(contents.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { failure = errno; return }
                offset += written
            }
        }
        if failure == nil && fsync(descriptor) != 0 { failure = errno }
        if close(descriptor) != 0 && failure == nil { failure = errno }
        if failure == nil && rename(temporary, target) != 0 {
            let code = errno
            unlink(temporary)
            throw .replace(path, code: code)
        }
        if let failure {
            unlink(temporary)
            throw .write(path, code: failure)
        }
    }

    /// `mkdir -p` with mode 0700.
    private func createDirectories(_ directory: String) throws(HistoryFileError) {
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for component in directory.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw .createDirectory(prefix, for: path, code: errno)
            }
            prefix += "/"
        }
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func fileName(of path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// The home directory from the password database, for a process without `HOME`.
    private static func passwordHome() -> String? {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }
}

private func join(_ directory: String, _ name: String) -> String {
    directory.hasSuffix("/") ? directory + name : directory + "/" + name
}
