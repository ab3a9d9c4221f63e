import Model
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file of a plugin (its manifest, its `main`) that may be anything the plugin's author
/// or a link put there: only a regular file no larger than a stated limit is read, so a FIFO,
/// `/dev/zero` or a huge file breaks that one plugin instead of hanging or filling the host.
enum PluginFile {
    /// The most a `plugin.toml` may hold.
    static let manifestLimit = 1 << 20
    /// The most a Lua plugin's `main` file may hold.
    static let sourceLimit = 16 << 20

    /// The TOML file at `path` (at most ``manifestLimit`` bytes) as its tables and keys. With
    /// `followLinks` false (a plugin's manifest) a symbolic link is refused, not followed: a
    /// manifest that is a link to a file of the user's would make the host read that file and
    /// show part of it in the syntax error.
    ///
    /// - Throws: ``PluginProblem`` naming `path` and the line that is wrong.
    static func tables(_ path: String, what: String, followLinks: Bool = true) throws(PluginProblem) -> Fields {
        let bytes = try read(path, limit: manifestLimit, what: what, followLinks: followLinks)
        do throws(HostSetupError) {
            return try ConfigFile.parse(bytes: bytes, name: path).sections
        } catch {
            throw PluginProblem(error.description)
        }
    }

    /// The bytes of the regular file at `path`, at most `limit` of them.
    ///
    /// - Throws: ``PluginProblem`` naming `path` and why it was not read (prefixed by `what`).
    static func read(_ path: String, limit: Int, what: String, followLinks: Bool = true) throws(PluginProblem) -> [UInt8] {
        // stat first: opening a device or a FIFO may itself block or have effects.
        var status = stat()
        guard (followLinks ? stat(path, &status) : lstat(path, &status)) == 0 else {
            throw problem(path, what, "cannot read it (\(lastError()))")
        }
        try checkKind(status, path, what, limit)
        // O_NONBLOCK: should the path have become a FIFO since, the open does not wait for a writer;
        // O_NOFOLLOW: nor a link followed that was swapped in after the lstat.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followLinks ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else { throw problem(path, what, "cannot read it (\(lastError()))") }
        defer { close(descriptor) }
        guard fstat(descriptor, &status) == 0 else { throw problem(path, what, "cannot read it (\(lastError()))") }
        try checkKind(status, path, what, limit)
        // One byte past the limit: a file that grew meanwhile is still refused, never read whole.
        var bytes = [UInt8](repeating: 0, count: min(Int(status.st_size), limit) + 1)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.read(descriptor, base + count, buffer.count - count)
            }
            if read < 0 && errno == EINTR { continue }
            if read < 0 { throw problem(path, what, "cannot read it (\(lastError()))") }
            if read == 0 { break }
            count += read
        }
        if count > limit { throw tooLarge(path, what, limit) }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    private static func checkKind(_ status: stat, _ path: String, _ what: String, _ limit: Int) throws(PluginProblem) {
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG else {
            let name = switch kind {
            case S_IFDIR: "a directory"
            case S_IFIFO: "a FIFO"
            case S_IFCHR: "a character device"
            case S_IFBLK: "a block device"
            case S_IFSOCK: "a socket"
            case S_IFLNK: "a symbolic link"
            default: "not a regular file"
            }
            throw problem(path, what, "it is \(name), not a regular file (make it an ordinary file)")
        }
        if Int(status.st_size) > limit { throw tooLarge(path, what, limit) }
    }

    private static func tooLarge(_ path: String, _ what: String, _ limit: Int) -> PluginProblem {
        problem(path, what, "it is larger than \(limit >> 20) MiB, the most a plugin's \(what) may hold")
    }

    private static func problem(_ path: String, _ what: String, _ reason: String) -> PluginProblem {
        PluginProblem("\(path): cannot use it as the plugin's \(what): \(reason)")
    }

    private static func lastError() -> String {
        guard let message = strerror(errno) else { return "error \(errno)" }
        return String(cString: message)
    }
}
