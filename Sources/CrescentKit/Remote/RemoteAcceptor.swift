import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The listening socket of remote control, accepted on a thread of its own.
///
/// Accepting here rather than through NIO gives the server each client's descriptor before NIO
/// owns it: the client's channel then lives on the host's loop (a request is read, run and
/// answered in one turn, with no hop between threads), and ``InterruptWatch`` keeps a duplicate
/// to find an `interrupt` while that loop is busy running the client's code.
final class RemoteAcceptor: Sendable {
    let descriptor: Int32
    private let stopping = Atomic<Bool>(false)

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Binds a socket at `path` and listens; the error names the path and the reason.
    static func listen(at path: String, backlog: Int32 = 128) throws(RemoteError) -> RemoteAcceptor {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw RemoteError("cannot make a socket: \(String(cString: strerror(errno)))") }
        let bound = UnixSocket.withAddress(path) { address, length in bind(descriptor, address, length) }
        guard bound == 0, Glibc.listen(descriptor, backlog) == 0 else {
            let reason = bound == -2 ? "the path is too long" : String(cString: strerror(errno))
            close(descriptor)
            throw RemoteError("cannot listen on \(path): \(reason)")
        }
        return RemoteAcceptor(descriptor: descriptor)
    }

    /// Accepts clients until ``stop()``, handing each connected descriptor to `accepted` (on the
    /// accepting thread; it owns the descriptor).
    func run(_ accepted: @escaping @Sendable (Int32) -> Void) {
        DispatchQueue(label: "crescent.remote.accept").async { [self] in
            while !stopping.load(ordering: .relaxed) {
                let client = accept(descriptor, nil, nil)
                if client >= 0 {
                    // Not inherited by a plugin's process (`accept4` is not visible to Swift).
                    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                    accepted(client)
                } else if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
                    // Out of descriptors: clients wait in the backlog until some are closed.
                    usleep(50_000)
                } else if errno != EINTR && errno != ECONNABORTED {
                    break
                }
            }
            close(descriptor)
        }
    }

    /// Stops accepting: the blocked `accept` returns and the thread closes the socket.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        shutdown(descriptor, Int32(SHUT_RDWR))
    }
}
