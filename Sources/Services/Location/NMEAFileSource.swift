import Glibc
import Model

/// An NMEA file's fixes for a ``Replay``, read as the replay goes (64 KiB at a time): the first
/// fix comes once its sentences are read, not after the whole file, and a recording of any length
/// takes the same memory. Lines are cut at ``LineSplitter/maximumLine``.
final class NMEAFileSource: ReplaySource {
    private let path: String
    private var descriptor: Int32
    private var parser: NMEAParser
    private var lines = LineSplitter()
    private var ready: [LocationFix] = []
    private var position = 0
    private var reachedEnd = false
    private var delivered = 0
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    /// Opens `path`; fixes without a date in the file take the UTC date of `today`.
    init(path: String, today: Double) throws(ServiceError) {
        self.path = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ServiceError(.unavailable, "cannot open the NMEA file \(path): \(String(cString: strerror(errno)))")
        }
        parser = NMEAParser(today: today)
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    func next() throws(ServiceError) -> (fix: LocationFix, recordedTime: Double?)? {
        while position >= ready.count {
            guard !reachedEnd else {
                // An empty or garbage file is a failure, as an empty GPX track is.
                if delivered == 0 {
                    throw ServiceError(.invalidData, "\(path): no fix in the file (\(parser.accepted) usable sentences, "
                        + "\(parser.rejected) rejected for a bad checksum or missing fields)")
                }
                return nil
            }
            ready.removeAll(keepingCapacity: true)
            position = 0
            try readMore()
        }
        defer { position += 1 }
        delivered += 1
        return (ready[position], ready[position].time)
    }

    /// Reads the next block of the file into ``ready``; at the end, the last line and epoch.
    private func readMore() throws(ServiceError) {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { return }
            throw ServiceError(.io, "cannot read the NMEA file \(path): \(String(cString: strerror(errno)))")
        }
        if count == 0 {
            reachedEnd = true
            if let last = lines.finish() { ready += parser.feed(last) }
            ready += parser.finish()
            close(descriptor)
            descriptor = -1
            return
        }
        for line in lines.append(bytes: buffer[0..<count]) { ready += parser.feed(line) }
    }
}
