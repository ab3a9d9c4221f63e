import Foundation
import Glibc
import Model

/// The file operations of the files service, blocking (the service runs them off the loop),
/// each failure a ``ServiceError`` naming the path: `not_found`, `permission`,
/// `invalid_argument` (a folder where a file is wanted), `io` for the rest.
enum FileSystem {
    /// The whole file, up to `limit` bytes (a bigger one is `io` naming the limit).
    static func read(_ path: String, limit: Int) throws(ServiceError) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO with no writer (or a terminal) must not wait, holding one
        // of the few threads every files call shares; such a path is refused below.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw failure(path, errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure(path, errno) }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw ServiceError(.invalidArgument, "'\(clipped(path))' is a folder: files:list(path) lists it")
        case S_IFIFO:
            throw ServiceError(.invalidArgument, "'\(clipped(path))' is a FIFO (a named pipe), not a file: files:read reads files; read a program's output with services.process")
        default:
            throw ServiceError(.invalidArgument, "'\(clipped(path))' is a device or a socket, not a file: files:read reads files")
        }
        _ = fcntl(descriptor, F_SETFL, O_RDONLY)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw failure(path, errno) }
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else {
                throw ServiceError(.io, "'\(clipped(path))' is larger than \(limit) bytes, the most files:read reads")
            }
            bytes += buffer[0..<count]
        }
    }

    /// Writes `bytes` to `path` atomically: to a temporary file in the same folder, flushed to
    /// disk, then renamed over `path`, so a reader sees the old content or the new, never half.
    /// A new file gets mode 0644 (less the umask); an existing one keeps its mode.
    static func write(_ path: String, _ bytes: [UInt8]) throws(ServiceError) {
        let (folder, name) = Folders.split(path)
        guard !name.isEmpty, name != ".", name != ".." else { throw ServiceError(.invalidArgument, "'\(clipped(path))' names no file") }
        // The temporary name starts with the name, cut to 200 bytes so that a name near the
        // limit of 255 still has room for the suffix (a longer one fails at the rename, named).
        var template = Array(((folder.isEmpty ? "." : folder) + "/." + prefix(of: name, bytes: 200) + ".crescent-XXXXXX").utf8CString)
        // Invariant: the template is a non-empty array, so it has a base address.
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            let code = errno
            // A name or path too long is the script's path, not its folder.
            throw failure(code == ENAMETOOLONG ? path : (folder.isEmpty ? "." : folder), code)
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var committed = false
        defer {
            if !committed { unlink(temporary) }
        }
        var existing = stat()
        let mode: mode_t = stat(path, &existing) == 0 ? existing.st_mode & 0o7777 : 0o644 & ~currentUmask()
        fchmod(descriptor, mode)
        var offset = 0
        while offset < bytes.count {
            // Invariant: offset < bytes.count, so the buffer is not empty and has a base address.
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let code = errno
                close(descriptor)
                throw failure(path, code)
            }
            offset += count
        }
        guard fsync(descriptor) == 0 else {
            let code = errno
            close(descriptor)
            throw failure(path, code)
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else { throw failure(path, errno) }
        committed = true
    }

    /// The longest start of `name` of at most `bytes` UTF-8 bytes that ends between characters.
    private static func prefix(of name: String, bytes: Int) -> String {
        guard name.utf8.count > bytes else { return name }
        var kept = ""
        for character in name {
            guard kept.utf8.count + character.utf8.count <= bytes else { break }
            kept.append(character)
        }
        return kept
    }

    /// The names in the folder `path` (sorted, without `.` and `..`), those matching `glob` only.
    static func list(_ path: String, glob: PathGlob?) throws(ServiceError) -> [String] {
        var status = stat()
        guard stat(path, &status) == 0 else { throw failure(path, errno) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw ServiceError(.invalidArgument, "'\(clipped(path))' is not a folder") }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw failure(path, access(path, R_OK) == 0 ? EIO : EACCES)
        }
        return names.filter { glob?.matches($0) ?? true }.sorted()
    }

    /// `{ path, kind, size, modified, mode }` of `path` (a link is described itself, not followed).
    static func describe(_ path: String) throws(ServiceError) -> Value {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw failure(path, errno) }
        let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
        return .model(DataModel(statSchema, [
            .string(path), .string(kind(of: status.st_mode)), .integer(Int64(status.st_size)),
            .number(modified), .integer(Int64(status.st_mode & 0o7777)),
        ]))
    }

    /// The fields of the `fileStat` data model, declared once (a misspelled read names them).
    static let statSchema = ModelSchema("fileStat", ["path", "kind", "size", "modified", "mode"])

    /// `file`, `folder`, `link` or `other`.
    static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "file"
        case S_IFDIR: "folder"
        case S_IFLNK: "link"
        default: "other"
        }
    }

    /// True when `path` is a folder (following links).
    static func isFolder(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// The error for `code` at `path`.
    static func failure(_ path: String, _ code: Int32) -> ServiceError {
        let shown = clipped(path)
        switch code {
        case ENOENT: return ServiceError(.notFound, "'\(shown)' does not exist")
        case ENOTDIR: return ServiceError(.notFound, "'\(shown)' does not exist (a part of it is not a folder)")
        case EACCES, EPERM: return ServiceError(.permission, "'\(shown)': permission denied")
        case EISDIR: return ServiceError(.invalidArgument, "'\(shown)' is a folder")
        case ENAMETOOLONG:
            return ServiceError(.invalidArgument, "'\(shown)' is too long: a name may have at most \(NAME_MAX) bytes, a path \(PATH_MAX - 1)")
        default: return ServiceError(.io, "'\(shown)': \(String(cString: strerror(code)))")
        }
    }

    /// The process's umask, from /proc (`umask()` only reads it by changing it, which would
    /// race with other threads making files); 022 when it cannot be read.
    private static func currentUmask() -> mode_t {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
              let mask = mode_t(line.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) else { return 0o022 }
        return mask
    }
}
