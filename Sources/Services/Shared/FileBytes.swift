import Glibc
import Model

/// Whole files read with the C library (the Services target does not use Foundation): the
/// geocoder's data file, NMEA logs and GPX tracks.
enum FileBytes {
    /// The bytes of the file at `path`.
    ///
    /// - Throws: `unavailable` when it cannot be opened, `io` when reading fails.
    static func read(_ path: String) throws(ServiceError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ServiceError(.unavailable, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw ServiceError(.io, "cannot read \(path): \(String(cString: strerror(errno)))")
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
