public import NIOCore
import NIOPosix
import CDescriptors
import LuaBridge
import Model
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Remote control of a running host (DESIGN.md "Remote control"): a Unix socket in the user's
/// ``RemoteFolder`` speaking JSON-RPC 2.0, one object per line.
///
/// Clients are accepted on a thread of their own (``RemoteAcceptor``) and served on the host
/// loop: a request is read, run and answered in one turn, with no hop between threads. While
/// the loop runs a client's chunk, ``InterruptWatch`` finds an `interrupt` waiting on its socket
/// (that is how `interrupt` stops `while true do end`). What the host sends goes into the
/// client's ``RemoteConnection`` outbox, which never blocks the host. Each client has a ``RemoteSession`` whose scope owns
/// everything it subscribed to or started: a disconnect ends it all.
///
/// ```swift
/// let server = try RemoteServer.listen(host: bound, name: "groceries", exclusive: true, script: "groceries.lua")
/// ```
public final class RemoteServer {
    /// The name the host listens as (`groceries`, `repl-2`).
    public private(set) var name = ""
    /// The socket's path.
    public private(set) var path = ""
    let host: Host
    let script: String
    let version: String
    var sessions: [Int: RemoteSession] = [:]
    /// The prelude's `inspect`, kept from before any script could replace the global (taken once
    /// listening, so a server that never listened holds no reference into the VM).
    var inspect: LuaRef?
    /// A table holding the `print` of a client's eval, and the host's own while it is swapped
    /// out (see ``PrintSlot``).
    var printSlots: LuaRef?
    var printSwapped = false
    /// The client whose eval is running, which `print` writes to.
    var outputTarget: RemoteConnection?
    /// The functions of recent eval chunks, by their text.
    let chunks = CompiledChunks()
    /// The clients that follow the host's output.
    let followers = OutputFollowers()
    /// True once `io.write` goes through the host's console for the followers (``follow(_:)``).
    var routesStandardOutput = false
    /// The answers of `send` requests whose command has not run yet, by token.
    var pendingSends: [Int: (Result<Value, MethodError>) -> Void] = [:]
    var lastSendToken = 0
    /// The function the controller prelude reports a sent command's outcome to (made once).
    var sendReport: LuaRef?
    private var listener: Listener?

    /// The socket side: the accepting thread and the interrupt watch.
    struct Listener: Sendable {
        let acceptor: RemoteAcceptor
        let watch: InterruptWatch
    }

    private init(host: Host, script: String, version: String) {
        self.host = host
        self.script = script
        self.version = version
    }

    /// Starts listening as `name` (or, when `exclusive` is false and the name is taken, as
    /// `name-2`, `name-3` …). Call it off the host loop, before the main chunk runs.
    ///
    /// - Parameters:
    ///   - exclusive: a live host with the same name is an error (an explicit name, a script's
    ///     name); otherwise the next free name is taken (the REPL's `repl`).
    ///   - script: what `hello` and `crescent ls` show as the host's script.
    /// - Throws: ``RemoteError`` naming the folder or the live host's pid.
    public static func listen(host: NIOLoopBound<Host>, name: String, exclusive: Bool, script: String,
                              version: String, folder: RemoteFolder = .standard()) throws(RemoteError) -> NIOLoopBound<RemoteServer> {
        try RemoteFolder.validate(name: name)
        try folder.prepare()
        let server: NIOLoopBound<RemoteServer>
        let interrupter: LuaInterrupter
        let gate: LoopGate
        do {
            (server, interrupter, gate) = try host.eventLoop.submit {
                (NIOLoopBound(RemoteServer(host: host.value, script: script, version: version), eventLoop: host.eventLoop),
                 host.value.vm.interrupter, host.value.gate)
            }.wait()
        } catch {
            throw RemoteError("cannot set up remote control: \(error)")
        }
        // Two hosts starting together may both find a name free: the one that loses the bind
        // looks again (and then sees the winner live).
        var attempt = 0
        while true {
            attempt += 1
            let (chosen, path) = try claim(name, exclusive: exclusive, in: folder)
            let acceptor: RemoteAcceptor
            do throws(RemoteError) {
                acceptor = try RemoteAcceptor.listen(at: path)
            } catch {
                if attempt < 10, UnixSocket.probe(path) != .absent { continue }
                throw error
            }
            chmod(path, 0o600)
            let listener = Listener(acceptor: acceptor, watch: InterruptWatch(interrupter: interrupter))
            // Synchronously: a client accepted from now on may ask the name at once.
            try? host.eventLoop.submit {
                let server = server.value
                server.name = chosen
                server.path = path
                server.listener = listener
                server.inspect = server.host.loadedInspect()
                server.host.teardownActions.append { server.stop() }
                server.host.presenter.onRender = { server.rendered() }
            }.wait()
            let ids = ConnectionNumbers()
            let owner = getuid()
            acceptor.run { descriptor in
                accept(descriptor, owner: owner, id: ids.next(), server: server, gate: gate, watch: listener.watch,
                       interrupter: interrupter)
            }
            return server
        }
    }

    /// The name to listen as and its path: stale sockets of dead hosts are removed on the way;
    /// anything else at a path is left alone and refused.
    private static func claim(_ name: String, exclusive: Bool, in folder: RemoteFolder) throws(RemoteError) -> (String, String) {
        var number = 1
        while true {
            let candidate = number == 1 ? name : "\(name)-\(number)"
            let path = folder.socketPath(for: candidate)
            switch UnixSocket.probe(path) {
            case .absent:
                return (candidate, path)
            case .stale:
                // A host that has bound but not yet listens refuses too: look once more.
                usleep(50_000)
                if case .live = UnixSocket.probe(path) { continue }
                unlink(path)
                return (candidate, path)
            case .live(let pid):
                if exclusive {
                    throw RemoteError("a host already listens as '\(name)' (pid \(pid), \(path)); stop it or choose another name with --listen=NAME")
                }
                number += 1
            case .notSocket:
                throw RemoteError("cannot listen as '\(candidate)': \(path) exists and is not a socket; move it away or choose another name with --listen=NAME")
            }
        }
    }

    /// A new connection, on the accepting thread: refused unless its peer is this user, else
    /// served on the host loop.
    private static func accept(_ descriptor: Int32, owner: uid_t, id: Int, server: NIOLoopBound<RemoteServer>, gate: LoopGate,
                               watch: InterruptWatch, interrupter: LuaInterrupter) {
        var credentials: UnixSocket.PeerCredentials = (0, 0, 0)
        var length = socklen_t(MemoryLayout<UnixSocket.PeerCredentials>.size)
        let known = getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0
        guard known, credentials.1 == owner else {
            let reason = known ? "permission: this host belongs to uid \(owner); uid \(credentials.1) may not control it"
                               : "permission: the peer's credentials cannot be read"
            disconnect(descriptor, reason: reason)
            return
        }
        let peek = dup(descriptor)
        // A client may use the first half of the descriptors kept from scripts (a script holding
        // all it may can still be reached), never the last: a host with hundreds of clients must
        // still open its store and reach gpsd.
        var limit: Int32 = 0, reserve: Int32 = 0
        if crescent_descriptor_in_core_reserve(max(descriptor, peek), &limit, &reserve) != 0 || peek < 0 {
            if peek >= 0 { close(peek) }
            disconnect(descriptor, reason: "the host has too many clients and open files (the last \(reserve) of its "
                       + "\(limit) descriptors are kept for itself); try again when others have disconnected")
            return
        }
        // Through the host's gate: a client accepted as the host finishes is not registered on a
        // loop that may be shut down.
        let passed = gate.execute(on: server.eventLoop) {
            serve(descriptor, peek: peek, id: id, server: server, watch: watch, interrupter: interrupter)
        }
        if !passed {
            close(descriptor)
            if peek >= 0 { close(peek) }
        }
    }

    /// Tells a client it is not served, and why, and closes its descriptor.
    private static func disconnect(_ descriptor: Int32, reason: String) {
        let line = Array((JSONRPCMessage.notification(method: "disconnect", params: ["reason": .string(reason)]).line + "\n").utf8)
        _ = line.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        close(descriptor)
    }

    /// Serves an accepted client on the host loop, with `peek` (a duplicate) for the interrupt watch.
    private static func serve(_ descriptor: Int32, peek: Int32, id: Int, server: NIOLoopBound<RemoteServer>,
                              watch: InterruptWatch, interrupter: LuaInterrupter) {
        ClientBootstrap(group: server.eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let connection = RemoteConnection(id: id, channel: channel) { connection, what in
                        // A disconnect ends the client's running code as a hang-up does (the
                        // overflow may come from that code's own output, while it holds the loop).
                        if connection.codeRunning.load(ordering: .relaxed) {
                            connection.interruptRequested.store(true, ordering: .relaxed)
                            interrupter.interruptRunningCode()
                        }
                        onHost(server) { $0.warn("remote client \(id) disconnected: it did not read, and \(what)") }
                        // And what it subscribed to or started, once the loop is free (not from
                        // inside its own running code); the channel closes later.
                        server.eventLoop.execute {
                            let server = server.value
                            server.host.runTurn { _ in server.disconnected(connection) }
                        }
                    }
                    let handler = RemoteChannelHandler(
                        connection: connection,
                        received: { connection, line in received(line, from: connection, server: server, interrupter: interrupter) },
                        closed: { connection in onHost(server) { $0.disconnected(connection) } })
                    try channel.pipeline.syncOperations.addHandler(handler)
                    if peek >= 0 { watch.add(connection, descriptor: peek) }
                    onHost(server) { $0.connected(connection) }
                }
            }
            .withConnectedSocket(descriptor)
            .whenFailure { _ in
                if peek >= 0 { close(peek) }
            }
    }

    /// A line from a client, on the host loop.
    private static func received(_ line: ByteBuffer, from connection: RemoteConnection, server: NIOLoopBound<RemoteServer>,
                                 interrupter: LuaInterrupter) {
        let message: JSONRPCMessage
        switch JSONRPCMessage.parse(line: line.readableBytesView) {
        case .success(let parsed): message = parsed
        case .failure(let error):
            connection.send(error.reply)
            return
        }
        if case .request(_, "interrupt", _) = message {
            connection.interruptRequested.store(true, ordering: .relaxed)
            // The host loop is busy running this client's code: stop the code from here.
            if connection.codeRunning.load(ordering: .relaxed) { interrupter.interruptRunningCode() }
        }
        onHost(server) { $0.handle(message, from: connection) }
    }

    /// Runs `body` on the host loop as a turn (output flushed, changes delivered, the view
    /// rendered after it): at once when already there (a client's channel lives on the host
    /// loop). Nothing runs once the host has finished.
    private static func onHost(_ server: NIOLoopBound<RemoteServer>, _ body: @escaping @Sendable (RemoteServer) -> Void) {
        if server.eventLoop.inEventLoop {
            server.value.host.runTurn { _ in body(server.value) }
        } else {
            server.eventLoop.execute {
                let server = server.value
                server.host.runTurn { _ in body(server) }
            }
        }
    }

    // MARK: On the host loop

    private func connected(_ connection: RemoteConnection) {
        sessions[connection.id] = RemoteSession(connection: connection)
    }

    private func disconnected(_ connection: RemoteConnection) {
        listener?.watch.remove(connection.id)
        // Its hanging up may have interrupted code of its that ended before the interrupt landed.
        // (Once: an overflow forgets the client before its channel closes, and this runs again then.)
        if connection.interruptRequested.exchange(false, ordering: .relaxed) { host.clearStrayInterrupt() }
        guard let session = sessions.removeValue(forKey: connection.id) else { return }
        unfollow(connection)
        if let task = session.evalTask { host.cancel(task) }
        session.end()
    }

    /// Closes every connection and the socket, and removes the socket file (host teardown).
    private func stop() {
        for session in sessions.values {
            unfollow(session.connection)
            session.connection.close()
            session.end()
        }
        sessions.removeAll()
        pendingSends.removeAll()
        chunks.removeAll()
        host.presenter.onRender = nil
        guard let listener else { return }
        self.listener = nil
        unlink(path)
        listener.acceptor.stop()
        listener.watch.stop()
    }

    func warn(_ message: String) {
        host.writeError("\(host.console.styled("crescent: warning:", .warning)) \(message)")
    }

    /// The number of connected clients.
    public var clientCount: Int { sessions.count }
}

/// Numbers connections in the order they are accepted (on the accepting thread).
private final class ConnectionNumbers: Sendable {
    private let last = Atomic<Int>(0)

    func next() -> Int { last.add(1, ordering: .relaxed).newValue }
}
