import Foundation
import Glibc
import Model

/// The file operations of the files service, blocking (the service runs them off the loop),
/// each failure a ``ServiceError`` naming the path: `not_found`, `permission`,
/// `invalid_argument` (a folder where a file is wanted), `io` for the rest.
enum FileSystem {
    /// The whole file, up to `limit` bytes (a bigger one is `io` naming the limit).
    static func read(_ path: FilePath, limit: Int) throws(ServiceError) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO with no writer (or a terminal) must not wait, holding one
        // of the few threads every files call shares; such a path is refused below.
        let descriptor = path.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard descriptor >= 0 else { throw failure(path, errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure(path, errno) }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw ServiceError(.invalidArgument, "'\(path.shown)' is a folder: files:list(path) lists it")
        case S_IFIFO:
            throw ServiceError(.invalidArgument, "'\(path.shown)' is a FIFO (a named pipe), not a file: files:read reads files; read a program's output with services.process")
        default:
            throw ServiceError(.invalidArgument, "'\(path.shown)' is a device or a socket, not a file: files:read reads files")
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
                throw ServiceError(.io, "'\(path.shown)' is larger than \(limit) bytes, the most files:read reads")
            }
            bytes += buffer[0..<count]
        }
    }

    /// Writes `bytes` to `path` atomically: to a temporary file in the same folder, flushed to
    /// disk, then renamed over `path`, so a reader sees the old content or the new, never half.
    /// A new file gets mode 0644 (less the umask); an existing one keeps its mode and, when the
    /// host may give it (as root), its owner. A link is written through (see ``target(of:)``).
    static func write(_ requested: FilePath, _ bytes: [UInt8]) throws(ServiceError) {
        let path = try target(of: requested)
        let (folder, name) = path.split
        guard !name.isEmpty, name.bytes != Array(".".utf8), name.bytes != Array("..".utf8) else {
            throw ServiceError(.invalidArgument, "'\(path.shown)' names no file")
        }
        let place = folder.isEmpty ? FilePath(".") : folder
        // The temporary name starts with the name, cut to 200 bytes so that a name near the
        // limit of 255 still has room for the suffix (a longer one fails at the rename, named).
        var template = place.bytes + Array("/.".utf8) + prefix(of: name.bytes, bytes: 200) + Array(".crescent-XXXXXX".utf8) + [0]
        // Invariant: the template is a non-empty array, so it has a base address.
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { mkstemp($0.baseAddress!) }
        }
        guard descriptor >= 0 else {
            let code = errno
            // A folder that exists but makes no new file (/proc/self answers ENOENT) was said
            // not to exist.
            if code == ENOENT, isFolder(place) {
                throw ServiceError(.io, "cannot write '\(path.shown)': its folder '\(place.shown)' does not let a new file be made "
                                   + "(a file system such as /proc), and write replaces a file through a temporary one in its folder")
            }
            // A name or path too long is the script's path, not its folder.
            throw failure(code == ENAMETOOLONG ? path : place, code)
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let temporary = FilePath(bytes: template.dropLast())
        var committed = false
        defer {
            if !committed { _ = temporary.withCString { unlink($0) } }
        }
        var existing = stat()
        if path.withCString({ stat($0, &existing) }) == 0 {
            // The owner first: a change of owner clears the setuid and setgid bits, which the
            // mode then puts back. Refused to others than root: the file is then the writer's.
            _ = fchown(descriptor, existing.st_uid, existing.st_gid)
            fchmod(descriptor, existing.st_mode & 0o7777)
        } else {
            fchmod(descriptor, 0o644 & ~currentUmask())
        }
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
        let renamed = temporary.withCString { from in path.withCString { rename(from, $0) } }
        guard renamed == 0 else { throw failure(path, errno) }
        committed = true
    }

    /// Where a write of `path` goes. A link is followed to the file it names: the rename
    /// replaced the link by a file, cutting it from its target (a dotfile linked into a
    /// repository). What is not a file is refused: the rename replaced a device node, a FIFO or
    /// a socket by a file (`/dev/null` itself, for a script run as root).
    private static func target(of path: FilePath) throws(ServiceError) -> FilePath {
        var status = stat()
        guard path.withCString({ lstat($0, &status) }) == 0 else { return path }
        var resolved = path
        if status.st_mode & S_IFMT == S_IFLNK {
            resolved = linkTarget(of: path)
            // A link to nothing: the file is made where it points, as the shell's `>` does.
            guard resolved.withCString({ lstat($0, &status) }) == 0 else { return resolved }
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG, S_IFDIR:
            // A folder is refused at the rename, named.
            return resolved
        case S_IFIFO:
            throw ServiceError(.invalidArgument, "'\(path.shown)' is a FIFO (a named pipe), not a file: files:write writes files; write to a program's input with services.process")
        default:
            throw ServiceError(.invalidArgument, "'\(path.shown)' is a device or a socket, not a file: files:write writes files")
        }
    }

    /// The file the link `path` leads to: its full path when it exists, else where the link
    /// points (relative to the link's folder).
    private static func linkTarget(of path: FilePath) -> FilePath {
        if let real = path.withCString({ realpath($0, nil) }) {
            defer { free(real) }
            return FilePath(bytes: UnsafeRawBufferPointer(start: real, count: strlen(real)))
        }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        // Invariant: the buffer holds PATH_MAX bytes, so it has a base address.
        let count = path.withCString { link in buffer.withUnsafeMutableBufferPointer { readlink(link, $0.baseAddress!, $0.count) } }
        guard count > 0 else { return path }
        let pointed = FilePath(bytes: buffer[..<count].map { UInt8(bitPattern: $0) })
        let folder = path.split.folder
        return pointed.bytes.first == UInt8(ascii: "/") || folder.isEmpty ? pointed : folder.appending(pointed)
    }

    /// The start of `name` of at most `count` bytes, not cut inside a UTF-8 sequence.
    private static func prefix(of name: [UInt8], bytes count: Int) -> [UInt8] {
        guard name.count > count else { return name }
        var end = count
        // A continuation byte (10xxxxxx) at the cut: back to the start of its sequence.
        while end > 0, name[end] & 0xC0 == 0x80 { end -= 1 }
        return Array(name[..<end])
    }

    /// The names in the folder `path` (sorted, without `.` and `..`), those matching `glob` only.
    /// The names are their bytes (a name that is not UTF-8 stays as it is), sorted by them.
    static func list(_ path: FilePath, glob: PathGlob?) throws(ServiceError) -> [FilePath] {
        var status = stat()
        guard path.withCString({ stat($0, &status) }) == 0 else { throw failure(path, errno) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw ServiceError(.invalidArgument, "'\(path.shown)' is not a folder") }
        guard let names = names(in: path) else { throw failure(path, errno) }
        return names.filter { glob?.matches($0) ?? true }.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
    }

    /// The names in the folder `path` as their bytes, without `.` and `..`; nil (with `errno`
    /// set) when it cannot be read.
    static func names(in path: FilePath) -> [FilePath]? {
        guard let directory = path.withCString({ opendir($0) }) else { return nil }
        defer { closedir(directory) }
        var names: [FilePath] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else { break }
            let name = FilePath(bytes: DirectoryEntry.name(entry))
            if name.bytes != [UInt8(ascii: ".")] && name.bytes != [UInt8(ascii: "."), UInt8(ascii: ".")] { names.append(name) }
        }
        return errno == 0 ? names : nil
    }

    /// `{ path, kind, size, modified, mode }` of `path` (a link is described itself, not followed).
    static func describe(_ path: FilePath) throws(ServiceError) -> Value {
        var status = stat()
        guard path.withCString({ lstat($0, &status) }) == 0 else { throw failure(path, errno) }
        let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
        return .model(DataModel(statSchema, [
            path.value, .string(kind(of: status.st_mode)), .integer(Int64(status.st_size)),
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
    static func isFolder(_ path: FilePath) -> Bool {
        var status = stat()
        return path.withCString { stat($0, &status) } == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// The error for `code` at `path` (its bytes that are not UTF-8 written `\xFF`).
    static func failure(_ path: FilePath, _ code: Int32) -> ServiceError {
        let shown = path.shown
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
