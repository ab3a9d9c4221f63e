import Model
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks on a database file's place: whether it can be opened there, and making its folders.
enum DatabaseLocation {
    /// Checks, without creating anything, that a database at `path` can be opened: an existing
    /// file must be readable and writable and empty or an SQLite database; otherwise the nearest
    /// existing folder on the way to it must be writable.
    static func check(_ path: String) throws(ServiceError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw ServiceError(.io, "cannot open the store database \(path): it is not a regular file")
            }
            guard access(path, R_OK | W_OK) == 0 else {
                throw ServiceError(.io, "cannot open the store database \(path): \(errorText(errno))")
            }
            guard info.st_size == 0 || hasSQLiteHeader(path) else {
                throw ServiceError(.io, "cannot open the store database \(path): it is not an SQLite database; \(moveAside)")
            }
            return
        }
        var folder = parent(of: path)
        while true {
            if stat(folder, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    throw ServiceError(.io, "cannot open the store database \(path): \(folder) is not a folder")
                }
                guard access(folder, W_OK | X_OK) == 0 else {
                    throw ServiceError(.io, "cannot open the store database \(path): cannot write in \(folder): \(errorText(errno))")
                }
                return
            }
            let next = parent(of: folder)
            if next == folder { return }
            folder = next
        }
    }

    /// Which file a path names: its device and inode. A file removed or replaced while open keeps
    /// its identity in the open connection, while the path names another file or none.
    struct FileIdentity: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    /// The identity of the file at `path` (following links, as SQLite does), nil when there is
    /// none.
    static func identity(of path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// The fix for a damaged or foreign file, said after the reason.
    static let moveAside = "move it aside (a new store is made in its place) or choose another with --data-dir or [store] path"

    /// Makes the folders on the way to `path` (like `mkdir -p`), readable only by the user.
    static func createFolders(for path: String) throws(ServiceError) {
        if let failed = Folders.make(parent(of: path), mode: 0o700) {
            throw ServiceError(.io, "cannot open the store database \(path): cannot create \(failed.folder): \(errorText(failed.errno))")
        }
    }

    /// The folder holding `path` (`.` for a bare file name, `/` for the root).
    static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let folder = trimmed[..<slash]
        return folder.isEmpty ? "/" : String(folder)
    }

    private static func hasSQLiteHeader(_ path: String) -> Bool {
        guard let file = fopen(path, "rb") else { return false }
        defer { fclose(file) }
        var header = [UInt8](repeating: 0, count: 16)
        guard fread(&header, 1, 16, file) == 16 else { return false }
        return header == Array("SQLite format 3\0".utf8)
    }

    private static func errorText(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text).lowercased()
    }
}
