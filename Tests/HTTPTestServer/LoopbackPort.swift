#if canImport(Glibc)
import Glibc
#endif

/// Ports on 127.0.0.1 for tests that need a peer to be absent or want to start their own.
public enum LoopbackPort {
    /// A port nothing listened on a moment ago (bound, read, released), for a server the test
    /// starts itself such as gpsfake. Another process may take it meanwhile; a test that wants a
    /// refused connection holds a ``RefusingPort`` instead.
    public static func free() throws -> Int {
        let fd = try bound()
        defer { close(fd) }
        return try port(of: fd)
    }

    /// A socket bound to an ephemeral loopback port and not listening.
    static func bound() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoopbackPortError(call: "socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let done = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard done else {
            let error = LoopbackPortError(call: "bind", errno: errno)
            close(fd)
            throw error
        }
        return fd
    }

    static func port(of fd: Int32) throws -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard named else { throw LoopbackPortError(call: "getsockname", errno: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A loopback port that refuses connections for as long as it is held: bound and never listening,
/// so a server another test starts meanwhile cannot be given it. (A port found free and released
/// was once taken by a parallel test's silent server, and "refused" became a timeout in CI.)
public final class RefusingPort: Sendable {
    public let port: Int
    private let fd: Int32

    public init() throws {
        fd = try LoopbackPort.bound()
        do { port = try LoopbackPort.port(of: fd) } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }
}

/// A socket call that failed while finding a port.
public struct LoopbackPortError: Error, CustomStringConvertible {
    public let call: String
    public let errno: Int32
    public var description: String { "\(call) failed: \(String(cString: strerror(errno)))" }
}
