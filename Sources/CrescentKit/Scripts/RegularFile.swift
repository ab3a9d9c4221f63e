#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file named by a user, a project or a link put there, read or replaced only when it is a
/// regular file: a FIFO, `/dev/zero` or a huge file is refused with a reason instead of hanging
/// the reader or filling memory, and a device or FIFO is never replaced by a report written over it.
enum RegularFile {
    /// Why a file was not read.
    enum Refusal: Error, Sendable {
        /// stat or open or read failed: the system's message.
        case unreadable(String)
        /// It is there but not a regular file: what it is ("a FIFO", "a directory"…).
        case notRegular(String)
        /// It holds more than the limit given.
        case tooLarge(limit: Int)

        var isTooLarge: Bool {
            if case .tooLarge = self { return true }
            return false
        }

        /// "it is a FIFO, not a regular file (make it an ordinary file)", for a message that
        /// names the path first.
        var reason: String {
            switch self {
            case .unreadable(let message): "cannot read it (\(message))"
            case .notRegular(let kind): "it is \(kind), not a regular file (make it an ordinary file)"
            case .tooLarge(let limit): "it is larger than \(limit >> 20) MiB"
            }
        }
    }

    /// The bytes of the regular file at `path`, at most `limit` of them. With `followLinks` false
    /// a symbolic link is refused, not followed.
    static func read(_ path: String, limit: Int, followLinks: Bool = true) throws(Refusal) -> [UInt8] {
        try read(bytes: Array(path.utf8), limit: limit, followLinks: followLinks)
    }

    /// ``read(_:limit:followLinks:)`` of a path given as its bytes, which need not be UTF-8.
    static func read(bytes path: [UInt8], limit: Int, followLinks: Bool = true) throws(Refusal) -> [UInt8] {
        var terminated = path.map { CChar(bitPattern: $0) }
        terminated.append(0)
        return try terminated.withUnsafeBufferPointer { buffer throws(Refusal) in
            // Invariant: the buffer holds at least the NUL, so it has a base address.
            try read(cPath: buffer.baseAddress!, limit: limit, followLinks: followLinks)
        }
    }

    private static func read(cPath path: UnsafePointer<CChar>, limit: Int, followLinks: Bool) throws(Refusal) -> [UInt8] {
        // stat first: opening a device or a FIFO may itself block or have effects.
        var status = stat()
        guard (followLinks ? stat(path, &status) : lstat(path, &status)) == 0 else { throw .unreadable(lastError()) }
        try check(status, limit: limit)
        // O_NONBLOCK: should the path have become a FIFO since, the open does not wait for a writer;
        // O_NOFOLLOW: nor a link followed that was swapped in after the lstat.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (followLinks ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else { throw .unreadable(lastError()) }
        defer { close(descriptor) }
        guard fstat(descriptor, &status) == 0 else { throw .unreadable(lastError()) }
        try check(status, limit: limit)
        // One byte past the limit: a file that grew meanwhile is still refused, never read whole.
        var bytes = [UInt8](repeating: 0, count: min(Int(status.st_size), limit) + 1)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.read(descriptor, base + count, buffer.count - count)
            }
            if read < 0 && errno == EINTR { continue }
            if read < 0 { throw .unreadable(lastError()) }
            if read == 0 { break }
            count += read
        }
        if count > limit { throw .tooLarge(limit: limit) }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    /// What is at `path` when it is there and not a regular file (a link is followed): "a FIFO",
    /// "a character device"…; nil for a regular file or nothing. A report must not be written
    /// there: renaming over the path would replace the device or FIFO with a file.
    static func nonRegularKind(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return kind(status.st_mode)
    }

    /// The device and inode of the file at `path` (a link is followed), to tell two names of one file.
    static func identity(_ path: String) -> (device: UInt64, inode: UInt64)? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    private static func check(_ status: stat, limit: Int) throws(Refusal) {
        if let kind = kind(status.st_mode) { throw .notRegular(kind) }
        if Int(status.st_size) > limit { throw .tooLarge(limit: limit) }
    }

    private static func kind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    private static func lastError() -> String {
        guard let message = strerror(errno) else { return "error \(errno)" }
        return String(cString: message)
    }
}
