import Glibc
import Model

/// A file read in pieces with the C library, for what is read as it is used (a GPX track being
/// replayed) rather than whole (``FileBytes``). The descriptor closes when the stream goes.
final class FileStream {
    let path: String
    private let descriptor: Int32

    /// Opens the file at `path` for reading.
    ///
    /// - Throws: `unavailable` when it cannot be opened.
    init(path: String) throws(ServiceError) {
        self.path = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ServiceError(.unavailable, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    /// Up to `count` more bytes; empty at the end of the file.
    ///
    /// - Throws: `io` when reading fails.
    func read(upTo count: Int) throws(ServiceError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        while true {
            let got = bytes.withUnsafeMutableBytes { buffer in Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw ServiceError(.io, "cannot read \(path): \(String(cString: strerror(errno)))") }
            bytes.removeLast(count - got)
            return bytes
        }
    }
}
