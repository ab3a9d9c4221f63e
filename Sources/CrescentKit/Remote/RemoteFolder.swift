import Services
#if canImport(Glibc)
import Glibc
#endif

/// The folder where a user's hosts listen: `$XDG_RUNTIME_DIR/crescent`, else `/tmp/crescent-UID`.
///
/// The folder is the first lock on the door: mode 0700 and owned by the user, so nobody else can
/// even reach a socket in it (the server still checks each peer's uid). A folder owned by someone
/// else is never used: another user could have made it to collect the connections.
///
/// ```swift
/// let folder = RemoteFolder.standard()
/// try folder.prepare()
/// folder.socketPath(for: "groceries")   // /run/user/1000/crescent/groceries.sock
/// ```
public struct RemoteFolder: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// The folder for this user, from `XDG_RUNTIME_DIR` when it is set and absolute.
    public static func standard() -> RemoteFolder {
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), runtime.hasPrefix("/") {
            return RemoteFolder(path: runtime + "/crescent")
        }
        return RemoteFolder(path: "/tmp/crescent-\(getuid())")
    }

    /// The socket of the host named `name`.
    public func socketPath(for name: String) -> String { path + "/" + name + ".sock" }

    /// Checks a host name: letters, digits, `.`, `_` and `-`, at most 64 characters, not starting
    /// with `.` (it becomes a file name).
    public static func validate(name: String) throws(RemoteError) {
        let allowed = name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard !name.isEmpty, name.utf8.count <= 64, allowed, !name.hasPrefix(".") else {
            throw RemoteError("invalid listen name '\(name)': use letters, digits, '.', '_' and '-' (at most 64, not starting with '.')")
        }
    }

    /// Makes the folder (mode 0700) or checks the one there: a real folder owned by this user.
    /// A folder of ours with a wider mode is narrowed to 0700.
    public func prepare() throws(RemoteError) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw RemoteError("cannot create the socket folder \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw RemoteError("cannot read the socket folder \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw RemoteError("\(path) is not a folder; remove it so the host can listen")
        }
        guard info.st_uid == getuid() else {
            throw RemoteError("refusing to listen: the socket folder \(path) belongs to uid \(info.st_uid), not to you (uid \(getuid())); another user may be waiting for your connections there. Remove it, or set XDG_RUNTIME_DIR to a folder of yours")
        }
        if info.st_mode & 0o077 != 0 && chmod(path, 0o700) != 0 {
            throw RemoteError("the socket folder \(path) is open to others and cannot be narrowed to 0700: \(String(cString: strerror(errno)))")
        }
    }

    /// The names of the sockets in the folder, sorted (live or stale: ``UnixSocket/probe(_:)`` tells).
    public func socketNames() -> [String] {
        let names = Folders.names(in: path) ?? []
        return names.filter { $0.hasSuffix(".sock") && !$0.hasPrefix(".") }.map { String($0.dropLast(5)) }.sorted()
    }
}
