import Glibc
import Model

/// Whole files read with the C library (the Services target does not use Foundation): the
/// geocoder's data file, NMEA logs and GPX tracks.
enum FileBytes {
    /// The bytes of the regular file at `path`.
    ///
    /// The file is opened without waiting (a FIFO would otherwise block `open` until a writer
    /// came, forever) and refused unless it is a regular file: a FIFO, a device or a folder has no
    /// size to read up to.
    ///
    /// - Parameter maximumBytes: the largest file read; a bigger one is refused before reading.
    /// - Throws: `unavailable` when it cannot be opened, `invalid_data` when it is not a regular
    ///   file or is too big, `io` when reading fails.
    static func read(_ path: String, maximumBytes: Int = Int.max) throws(ServiceError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw ServiceError(.unavailable, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw ServiceError(.io, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ServiceError(.invalidData, "\(path) is not a regular file (a FIFO, device or folder): name a regular file")
        }
        guard Int(status.st_size) <= maximumBytes else {
            throw ServiceError(.invalidData, "\(path) is \(status.st_size) bytes, more than the \(maximumBytes) read: name the right file")
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while filled < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                // Invariant: filled < count, so the base address is non-nil and the range valid.
                Glibc.read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else {
                throw ServiceError(.io, "cannot read \(path): \(got == 0 ? "the file got shorter" : String(cString: strerror(errno)))")
            }
            filled += got
        }
        return bytes
    }
}
