public import NIOCore
import NIOPosix
import LuaBridge
import Model
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Remote control of a running host (DESIGN.md "Remote control"): a Unix socket in the user's
/// ``RemoteFolder`` speaking JSON-RPC 2.0, one object per line.
///
/// The socket is served by a NIO loop of its own, so a client is read even while the host loop
/// runs a long chunk (that is how `interrupt` stops `while true do end`). Each message hops onto
/// the host loop as a turn; what the host sends goes into the client's ``RemoteConnection``
/// outbox, which never blocks the host. Each client has a ``RemoteSession`` whose scope owns
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
    /// The `print` of a client's eval, and the host's own while it is swapped out.
    var capturingPrint: LuaRef?
    var savedPrint: LuaRef?
    /// The client whose eval is running, which `print` writes to.
    var outputTarget: RemoteConnection?
    /// The clients that follow the host's output.
    let followers = OutputFollowers()
    private var listener: Listener?

    /// The socket side: its own loop and the listening channel.
    struct Listener: Sendable {
        let group: MultiThreadedEventLoopGroup
        let channel: any Channel
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
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server: NIOLoopBound<RemoteServer>
        let interrupter: LuaInterrupter
        do {
            (server, interrupter) = try host.eventLoop.submit {
                (NIOLoopBound(RemoteServer(host: host.value, script: script, version: version), eventLoop: host.eventLoop),
                 host.value.vm.interrupter)
            }.wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw RemoteError("cannot set up remote control: \(error)")
        }
        let ids = ConnectionNumbers()
        let owner = getuid()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
            .childChannelInitializer { channel in
                accept(channel, owner: owner, id: ids.next(), server: server, interrupter: interrupter)
            }
        // Two hosts starting together may both find a name free: the one that loses the bind
        // looks again (and then sees the winner live).
        var attempt = 0
        while true {
            attempt += 1
            let chosen: String, path: String
            do throws(RemoteError) {
                (chosen, path) = try claim(name, exclusive: exclusive, in: folder)
            } catch {
                try? group.syncShutdownGracefully()
                throw error
            }
            let channel: any Channel
            do {
                channel = try bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false).wait()
            } catch {
                if attempt < 10, UnixSocket.probe(path) != .absent { continue }
                try? group.syncShutdownGracefully()
                throw RemoteError("cannot listen on \(path): \(error)")
            }
            chmod(path, 0o600)
            let listener = Listener(group: group, channel: channel)
            // Synchronously: a client accepted from now on may ask the name at once.
            try? host.eventLoop.submit {
                let server = server.value
                server.name = chosen
                server.path = path
                server.listener = listener
                server.host.vm.getGlobal("inspect")
                server.inspect = server.host.vm.ref()
                server.host.teardownActions.append { server.stop() }
                server.host.presenter.onRender = { server.rendered() }
            }.wait()
            return server
        }
    }

    /// The name to listen as and its path: stale sockets of dead hosts are removed on the way.
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
            }
        }
    }

    /// A new connection, on the I/O loop: refused unless its peer is this user, else served.
    private static func accept(_ channel: any Channel, owner: uid_t, id: Int, server: NIOLoopBound<RemoteServer>,
                               interrupter: LuaInterrupter) -> EventLoopFuture<Void> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(RemoteError("no peer credentials on this channel"))
        }
        let credentials: EventLoopFuture<UnixSocket.PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return credentials.flatMap { credentials in
            let peer = (pid: credentials.0, uid: credentials.1)
            guard peer.uid == owner else {
                let reason = "permission: this host belongs to uid \(owner); uid \(peer.uid) may not control it"
                return channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Refusal(reason: reason)) }
            }
            let connection = RemoteConnection(id: id, channel: channel) {
                onHost(server) { $0.warn("remote client \(id) disconnected: it did not read, and more than \(RemoteConnection.maxQueued) responses and events waited") }
            }
            let handler = RemoteChannelHandler(
                connection: connection,
                received: { connection, line in received(line, from: connection, server: server, interrupter: interrupter) },
                closed: { connection in onHost(server) { $0.disconnected(connection) } })
            do {
                try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(JSONRPCLineDecoder()), handler)
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            onHost(server) { $0.connected(connection) }
            return channel.eventLoop.makeSucceededVoidFuture()
        }
    }

    /// A line from a client, on the I/O loop: parsed here, `interrupt` acted on at once, the rest
    /// handed to the host loop.
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
            if connection.evalRunning.load(ordering: .relaxed) { interrupter.interruptRunningCode() }
        }
        onHost(server) { $0.handle(message, from: connection) }
    }

    /// Runs `body` on the host loop as a turn (output flushed, changes delivered, the view
    /// rendered after it). Nothing runs once the host has finished.
    private static func onHost(_ server: NIOLoopBound<RemoteServer>, _ body: @escaping @Sendable (RemoteServer) -> Void) {
        server.eventLoop.execute {
            let server = server.value
            server.host.runTurn { _ in body(server) }
        }
    }

    // MARK: On the host loop

    private func connected(_ connection: RemoteConnection) {
        sessions[connection.id] = RemoteSession(connection: connection)
    }

    private func disconnected(_ connection: RemoteConnection) {
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
        host.presenter.onRender = nil
        guard let listener else { return }
        self.listener = nil
        unlink(path)
        listener.channel.close(promise: nil)
        listener.group.shutdownGracefully { _ in }
    }

    func warn(_ message: String) {
        host.writeError("\(host.console.styled("crescent: warning:", .warning)) \(message)")
    }

    /// The number of connected clients.
    public var clientCount: Int { sessions.count }
}

/// Numbers connections in the order they are accepted (on the I/O loop).
private final class ConnectionNumbers: Sendable {
    private let last = Atomic<Int>(0)

    func next() -> Int { last.add(1, ordering: .relaxed).newValue }
}

/// Tells a peer of another user why it is refused, and closes.
private final class Refusal: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let reason: String

    init(reason: String) { self.reason = reason }

    func channelActive(context: ChannelHandlerContext) {
        let line = JSONRPCMessage.notification(method: "disconnect", params: ["reason": .string(reason)]).line + "\n"
        let channel = context.channel
        channel.writeAndFlush(channel.allocator.buffer(string: line)).whenComplete { _ in channel.close(promise: nil) }
    }
}
