#if canImport(Glibc)
import Glibc
#endif

/// A connected Unix-domain stream socket with blocking reads and writes: the client side of
/// remote control (the CLI, tests, the bench) and the server's check for a name already taken.
public final class UnixSocket {
    /// The file descriptor, closed with the object.
    public let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// What is at a socket path.
    public enum Probe: Equatable, Sendable {
        /// Nothing: the name is free.
        case absent
        /// A socket file nobody listens on (its host died): it may be replaced.
        case stale
        /// A host listens there: process `pid`.
        case live(pid: Int32)
        /// Something that is not a socket (a file, a folder): never replaced.
        case notSocket
    }

    /// Connects to the socket at `path`.
    public static func connect(path: String) throws(RemoteError) -> UnixSocket {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw RemoteError("cannot make a socket: \(String(cString: strerror(errno)))") }
        let connection = UnixSocket(descriptor: descriptor)
        let status = withAddress(path) { address, length in Glibc.connect(descriptor, address, length) }
        guard status == 0 else {
            let reason = status == -2 ? "the path is too long" : String(cString: strerror(errno))
            throw RemoteError("cannot connect to \(path): \(reason)")
        }
        return connection
    }

    /// Whether a host listens at `path`.
    public static func probe(_ path: String) -> Probe {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .absent }
        guard info.st_mode & S_IFMT == S_IFSOCK else { return .notSocket }
        guard let connection = try? connect(path: path) else { return .stale }
        return .live(pid: connection.peerCredentials?.pid ?? 0)
    }

    /// The process and user at the other end (`SO_PEERCRED`): for a client, the listening host.
    public var peerCredentials: (pid: Int32, uid: UInt32)? {
        var credentials: PeerCredentials = (0, 0, 0)
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return (credentials.0, credentials.1)
    }

    /// Writes all of `text`.
    public func write(_ text: String) throws(RemoteError) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { raw in
                send(descriptor, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw RemoteError("the host closed the connection (\(String(cString: strerror(errno))))")
            }
            offset += written
        }
    }

    /// Reads what is there (waiting for at least one byte); empty at the end of the stream.
    public func read(upTo count: Int = 65536) throws(RemoteError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, count) }
            if got >= 0 { return Array(buffer.prefix(got)) }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return [] }
            throw RemoteError("cannot read from the host: \(String(cString: strerror(errno)))")
        }
    }

    /// Waits until the socket is readable or `timeout` seconds pass (negative: forever).
    public func waitReadable(timeout: Double) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = timeout < 0 ? -1 : Int32(min(timeout * 1000, Double(Int32.max)))
        while true {
            let ready = poll(&entry, 1, milliseconds)
            if ready >= 0 { return ready > 0 }
            if errno != EINTR { return false }
        }
    }

    /// Glibc's `struct ucred` (pid, uid, gid), which Swift sees only under `_GNU_SOURCE`: three
    /// 32-bit fields, laid out alike in a homogeneous tuple.
    typealias PeerCredentials = (Int32, UInt32, UInt32)

    /// Runs `body` with a `sockaddr_un` for `path`; returns -2 when the path does not fit.
    static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return -2 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
