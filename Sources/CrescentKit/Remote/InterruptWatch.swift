import Dispatch
import LuaBridge
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Finds an `interrupt` a client sent, or the client's hanging up, while the host loop runs that
/// client's code.
///
/// The clients' channels live on the host loop, which reads nothing while it runs a chunk such
/// as `while true do end`. This thread looks, without consuming anything, at what waits on the
/// socket of each client whose eval is running (every 50 ms, and only while clients are
/// connected); an `interrupt` line there stops the code, as one read on the loop would. The
/// loop still reads the line afterwards and answers it as usual.
final class InterruptWatch: Sendable {
    private struct Watched {
        /// A duplicate of the client's descriptor, for peeking: NIO owns the original.
        let descriptor: Int32
        let connection: RemoteConnection
    }

    private struct State {
        var watched: [Int: Watched] = [:]
        var stopped = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let interrupter: LuaInterrupter

    init(interrupter: LuaInterrupter) {
        self.interrupter = interrupter
        DispatchQueue(label: "crescent.remote.interrupts").async { [self] in watch() }
    }

    /// Watches `connection` through `descriptor` (a duplicate this object now owns).
    func add(_ connection: RemoteConnection, descriptor: Int32) {
        let first = state.withLock { state -> Bool in
            guard !state.stopped else {
                close(descriptor)
                return false
            }
            state.watched[connection.id] = Watched(descriptor: descriptor, connection: connection)
            return state.watched.count == 1
        }
        if first { wake.signal() }
    }

    /// Stops watching client `id` and closes its duplicate.
    func remove(_ id: Int) {
        state.withLock { state in
            if let watched = state.watched.removeValue(forKey: id) { close(watched.descriptor) }
        }
    }

    /// Ends the thread and closes every duplicate.
    func stop() {
        state.withLock { state in
            state.stopped = true
            for watched in state.watched.values { close(watched.descriptor) }
            state.watched.removeAll()
        }
        wake.signal()
    }

    private func watch() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            // Peeked under the lock: a descriptor is never closed (and reused) mid-peek.
            let (stopped, idle) = state.withLock { state -> (Bool, Bool) in
                guard !state.stopped else { return (true, true) }
                for watched in state.watched.values where watched.connection.codeRunning.load(ordering: .relaxed)
                    && !watched.connection.interruptRequested.load(ordering: .relaxed) {
                    // A client gone is an interrupt too: what it started ends with it, and
                    // its channel hears of the end only once the loop is free.
                    if Self.hungUp(watched.descriptor) || Self.holdsInterrupt(watched.descriptor, &buffer) {
                        watched.connection.interruptRequested.store(true, ordering: .relaxed)
                        interrupter.interruptRunningCode()
                    }
                }
                return (false, state.watched.isEmpty)
            }
            if stopped { return }
            if idle { wake.wait() } else { usleep(50_000) }
        }
    }

    /// True when the peer of `descriptor` has closed or shut down its side, or the connection failed.
    private static func hungUp(_ descriptor: Int32) -> Bool {
        // POLLRDHUP, which Glibc shows Swift only under _GNU_SOURCE: the peer's end of the stream,
        // seen even while unread lines wait before it.
        let peerClosed: Int16 = 0x2000
        var entry = pollfd(fd: descriptor, events: peerClosed, revents: 0)
        guard poll(&entry, 1, 0) > 0 else { return false }
        return entry.revents & (peerClosed | Int16(POLLHUP) | Int16(POLLERR)) != 0
    }

    /// True when a whole `interrupt` request waits unread on `descriptor`.
    private static func holdsInterrupt(_ descriptor: Int32, _ buffer: inout [UInt8]) -> Bool {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        guard count > 0 else { return false }
        return buffer[..<count].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).dropLast(buffer[count - 1] == UInt8(ascii: "\n") ? 0 : 1).contains { line in
            if case .success(.request(_, "interrupt", _)) = JSONRPCMessage.parse(line: line) { return true }
            return false
        }
    }
}
