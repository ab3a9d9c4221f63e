public import NIOCore
import NIOHTTP1
public import NIOPosix
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1 for the http service's tests and bench: each request is
/// answered by a closure, which can also keep silent (a server that accepts and never answers).
///
/// ```swift
/// let server = try await HTTPTestServer.start { request in .respond(status: 200, body: Array("hi".utf8)) }
/// defer { Task { await server.stop() } }
/// // fetch "\(server.baseURL)/anything"
/// ```
public final class HTTPTestServer: Sendable {
    /// A request as the server received it.
    public struct Request: Sendable {
        public let method: String
        /// The request target: `/path?query`, or an absolute URL when sent to a proxy.
        public let uri: String
        public let headers: [(name: String, value: String)]
        public let body: [UInt8]

        /// The first value of header `name`, in any case.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// How the server answers one request.
    public enum Answer: Sendable {
        /// A response; `chunked` sends the body in chunks of at most 64 KiB without a
        /// Content-Length, so the client cannot know its size in advance.
        case respond(status: Int, headers: [(String, String)] = [], body: [UInt8] = [], chunked: Bool = false)
        /// No answer ever: the connection stays open and silent.
        case silence
        /// No answer: the server closes the connection, as one that closes a kept-alive
        /// connection it thought idle just as the next request arrives.
        case hangUp
    }

    /// What the server saw.
    struct Log {
        var requests: [Request] = []
        var connectionsOpened = 0
        var connectionsClosed = 0
    }

    public let port: Int
    private let channel: any Channel
    private let state: ServerState

    private init(port: Int, channel: any Channel, state: ServerState) {
        self.port = port
        self.channel = channel
        self.state = state
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts a server on a free port of 127.0.0.1.
    ///
    /// - Parameters:
    ///   - recordsRequests: keep every request for ``requests`` (off for benchmarks).
    ///   - answer: called on the server's loop for each complete request.
    public static func start(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, recordsRequests: Bool = true,
                             answer: @escaping @Sendable (Request) -> Answer) async throws -> HTTPTestServer {
        let server = ServerState(recordsRequests: recordsRequests, answer: answer)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(HTTPTestConnection(server: server))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else {
            try await channel.close()
            throw ChannelError.unknownLocalAddress
        }
        return HTTPTestServer(port: port, channel: channel, state: server)
    }

    /// Stops listening (open connections are left to their clients).
    public func stop() async {
        try? await channel.close()
    }

    /// Every request received so far, in order.
    public var requests: [Request] { state.log.withLock { $0.requests } }
    /// Connections accepted so far.
    public var connectionsOpened: Int { state.log.withLock { $0.connectionsOpened } }
    /// Connections that have closed so far (from either side).
    public var connectionsClosed: Int { state.log.withLock { $0.connectionsClosed } }
}

/// What every connection of one server shares.
final class ServerState: Sendable {
    let recordsRequests: Bool
    let answer: @Sendable (HTTPTestServer.Request) -> HTTPTestServer.Answer
    let log = Mutex(HTTPTestServer.Log())

    init(recordsRequests: Bool, answer: @escaping @Sendable (HTTPTestServer.Request) -> HTTPTestServer.Answer) {
        self.recordsRequests = recordsRequests
        self.answer = answer
    }
}
