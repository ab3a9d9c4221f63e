import AsyncHTTPClient
import Foundation
public import Model
public import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// `services.http`: HTTP and HTTPS requests over AsyncHTTPClient.
///
/// A request follows up to 10 redirects (a loop fails at once), takes at most `timeout` seconds
/// from connecting to the body's last byte (default 30 s, `[http] timeout`) and accepts a body of
/// at most `maxBytes` (default 10 MiB, `[http] max_bytes`): a larger one fails with `io` as soon
/// as the limit is passed, without being held in memory. Any status is a result; errors are
/// `invalid_argument` (a malformed URL, a scheme other than http and https, a bad option),
/// `network` (DNS, refused connections, TLS, redirect loops), `timeout` and `cancelled`.
/// `http_proxy`, `https_proxy` and `no_proxy` are honoured per request (``ProxyEnvironment``).
///
/// Connections are kept alive and reused (HTTP/1.1, or HTTP/2 where a TLS server offers it), up
/// to `[http] connections_per_host` per host. The clients run on NIO's shared event loop group
/// (the one the other services' sockets use) and their answers take one hop to the host's loop.
/// A plugin is not handed the host's loop, and running the clients there (tried twice in the
/// http-get bench row) was slower: Lua and the HTTP work then share one thread, where the shared
/// group spreads the HTTP work over the cores. Fewer hops did not pay either: one loop of the group
/// for every request, or each request pinned with its connection to one loop, were slower too.
/// Releasing the service shuts its clients down; ``shutdown()`` does it and waits.
///
/// ```lua
/// services.http:get("https://example.org/data.json", function(response, err)
///   if err then print(err.code, err.message) return end
///   print(response.status, response.headers["content-type"], #response.body)
///   local data = response:json()
/// end)
/// ```
///
/// Swift callers use ``fetch(_:)``.
public final class HTTPService: Service {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }

    /// Connections kept per host unless `[http] connections_per_host` says otherwise: enough for
    /// 50 requests in flight to one host without queueing.
    public static let defaultConnectionsPerHost = 50

    let settings: HTTPSettings
    private let proxies: ProxyEnvironment
    /// Where connections run when the caller chose; nil: NIO's shared group, made on the first
    /// request (``EventLoops``: a process out of file descriptors then gets `io`, not a trap).
    private let eventLoopGroup: (any EventLoopGroup)?
    private let clock: any ServiceClock
    /// Answers requests instead of the network when set (``Exchange``).
    private let exchange: Exchange?
    /// One client per proxy (nil: direct), made on first use; empty and closed after shutdown.
    private let clients = Mutex<(byProxy: [ProxyEnvironment.Proxy?: HTTPClient], isShutDown: Bool)>(([:], false))

    /// A service with the settings of an `[http]` section.
    ///
    /// - Parameters:
    ///   - config: the `[http]` section (`timeout`, `max_bytes`, `connections_per_host`).
    ///   - environment: the proxy variables (default: this process's).
    ///   - eventLoopGroup: where connections run (default: NIO's shared group).
    ///   - clock: what times requests out (the host's clock).
    ///   - exchange: answers every request in place of the network (`crescent test`'s
    ///     `fake.http`); nil for the network.
    /// - Throws: `invalid_argument` naming a bad setting.
    public init(config: Value = .object([:]), environment: [String: String]? = nil,
                eventLoopGroup: (any EventLoopGroup)? = nil, clock: any ServiceClock = SystemClock.shared,
                exchange: Exchange? = nil) throws(ServiceError) {
        settings = try HTTPSettings(config)
        self.clock = clock
        self.exchange = exchange
        proxies = ProxyEnvironment(environment: environment ?? ProxyEnvironment.current())
        self.eventLoopGroup = eventLoopGroup
    }

    deinit {
        for client in closeClients() { client.shutdown { _ in } }
    }

    /// The standard plugin's entry: `[http]` is read now, the service made on first use.
    static func entry(_ context: PluginContext) -> ServiceEntry {
        let config = context.section("http")
        do throws(ServiceError) {
            _ = try HTTPSettings(config)
        } catch {
            return ServiceEntry(HTTPService.self, failed: error)
        }
        let clock = context.clock
        return ServiceEntry(HTTPService.self) { () throws(ServiceError) in
            try HTTPService(config: config, clock: clock)
        }
    }

    // MARK: Requests

    /// Answers one request without the network: called once per request with the request and
    /// the completion to call exactly once (from any thread). Scripts and the feeds service see
    /// its answers as they would see a server's.
    public typealias Exchange = @Sendable (HTTPRequestSpec, @escaping @Sendable (Result<HTTPResponse, ServiceError>) -> Void) -> Void

    /// Sends `request` and returns the complete response, whatever its status.
    ///
    /// Conditional GETs work as they do on the wire: send `If-None-Match` or `If-Modified-Since`
    /// in `headers`, read `etag` and `last-modified` from the response, and take status 304 as
    /// "not modified". Cancelling the calling task cancels the request (its connection closes).
    ///
    /// - Throws: `invalid_argument`, `network`, `timeout`, `io` (body over `maxBytes`),
    ///   `cancelled`, or `unavailable` after ``shutdown()``.
    public func fetch(_ request: HTTPRequestSpec) async throws(ServiceError) -> HTTPResponse {
        let cancellation = Cancellation()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if let cancel = start(request, completion: { continuation.resume(returning: $0) }) { cancellation.onCancel(cancel) }
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }

    /// Sends `request` and calls `completion` once with the outcome, on one of NIO's threads
    /// (at once, on the calling thread, for a request that cannot be sent); returns what cancels
    /// it. ``fetch(_:)`` is the same for Swift concurrency; scripts' calls use this directly.
    /// Redirects are followed here (``HTTPExchange``), each target checked like the first URL.
    func start(_ request: HTTPRequestSpec,
               completion: @escaping @Sendable (Result<HTTPResponse, ServiceError>) -> Void) -> HTTPCancellation? {
        if let exchange {
            exchange(request, completion)
            return nil
        }
        let timeout: Double, maxBytes: Int, hop: Hop
        do throws(ServiceError) {
            timeout = try request.timeout.map { seconds throws(ServiceError) in try HTTPSettings.timeout(.number(seconds), name: "timeout") }
                ?? settings.timeout
            maxBytes = try request.maxBytes.map { bytes throws(ServiceError) in try HTTPSettings.maxBytes(.integer(Int64(bytes)), name: "maxBytes") }
                ?? settings.maxBytes
            hop = try prepareHop(request)
        } catch {
            completion(.failure(error))
            return nil
        }
        let limit = Duration.seconds(seconds: timeout)
        // The whole exchange, redirects included, is timed by the host's clock. On the system
        // clock the client keeps the deadline itself (a timer of the clock's would cost the host
        // loop a wake-up per request to cancel it); on a virtual clock the clock times it.
        let deadline = clock.monotonicDeadline(after: limit)
        let setting = request.maxBytesSetting ?? (request.maxBytes == nil ? "[http] max_bytes, or { maxBytes = n } for one request" : "{ maxBytes = n }")
        let running = HTTPExchange(service: self, url: HTTPTarget.redacted(request.url), timeout: timeout,
                                   limit: .init(maxBytes: maxBytes, setting: setting), deadline: deadline, completion: completion)
        if deadline == nil {
            running.timer = clock.schedule(after: limit) { running.timeOut() }
        }
        running.send(request, hop)
        return { running.cancel() }
    }

    /// One hop of an exchange, ready to send: the request AsyncHTTPClient sends and the client
    /// (direct or through the proxy for its host).
    struct Hop: Sendable {
        let request: HTTPClient.Request
        let client: HTTPClient
    }

    /// Checks `request`'s URL and headers and picks its client (`io` when the event loops cannot
    /// be started).
    func prepareHop(_ request: HTTPRequestSpec) throws(ServiceError) -> Hop {
        let target = try HTTPTarget(request.url)
        let prepared = try Self.prepare(request, target: target)
        return Hop(request: prepared, client: try client(for: try proxies.proxy(scheme: target.scheme, host: target.host, port: target.port)))
    }

    /// Shuts every client down and waits; later requests fail with `unavailable`.
    public func shutdown() async {
        for client in closeClients() { try? await client.shutdown() }
    }

    // MARK: Clients

    /// The client for `proxy`, made on first use.
    private func client(for proxy: ProxyEnvironment.Proxy?) throws(ServiceError) -> HTTPClient {
        try clients.withLock { state throws(ServiceError) -> HTTPClient in
            guard !state.isShutDown else { throw ServiceError(.unavailable, "the http service has shut down") }
            if let known = state.byProxy[proxy] { return known }
            let group: any EventLoopGroup
            if let eventLoopGroup { group = eventLoopGroup } else { group = try EventLoops.shared.group() }
            let client = HTTPClient(eventLoopGroup: group, configuration: configuration(proxy: proxy))
            state.byProxy[proxy] = client
            return client
        }
    }

    func configuration(proxy: ProxyEnvironment.Proxy?) -> HTTPClient.Configuration {
        // Redirects are followed by HTTPExchange, which checks each target first: the client would
        // connect to whatever a server names (a port past 65535 traps in NIO).
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, proxy: proxy)
        // Nothing reads spans: with the default no-op tracer the client still made a span per
        // request, with its attributes, casts and strings, a cost on every request for nothing.
        configuration.tracing.tracer = nil
        configuration.connectionPool = .init(idleTimeout: .seconds(60),
                                             concurrentHTTP1ConnectionsPerHostSoftLimit: settings.connectionsPerHost)
        // A refused connection fails its requests at once, as curl does, instead of retrying
        // with back-off until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        // Connecting may take the whole default timeout (AsyncHTTPClient's own limit is 10 s); a
        // request's own deadline still ends it sooner.
        configuration.timeout.connect = .nanoseconds(Int64(settings.timeout * 1e9))
        return configuration
    }

    /// Marks the service shut down and hands over its clients to be shut down.
    private func closeClients() -> [HTTPClient] {
        clients.withLock { state in
            state.isShutDown = true
            defer { state.byProxy.removeAll() }
            return Array(state.byProxy.values)
        }
    }

    // MARK: Requests on the wire

    /// The request AsyncHTTPClient sends; method and header problems are `invalid_argument`. The
    /// URL's user information becomes Basic authentication unless `headers` has its own.
    static func prepare(_ request: HTTPRequestSpec, target: HTTPTarget) throws(ServiceError) -> HTTPClient.Request {
        let method = request.method.uppercased()
        guard !method.isEmpty, method.utf8.allSatisfy(isTokenByte) else {
            throw ServiceError(.invalidArgument, "method '\(clipped(request.method, limit: 40))' is not an HTTP method (GET, POST, PUT, DELETE, …)")
        }
        var headers = HTTPHeaders()
        for (name, value) in request.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                throw ServiceError(.invalidArgument, "header name '\(clipped(name, limit: 40))' is not valid: use letters, digits and -")
            }
            if let bad = value.utf8.first(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) {
                let what = bad == 0 ? "a NUL byte" : "a line break"
                throw ServiceError(.invalidArgument, "header '\(clipped(name, limit: 40))' has \(what) in its value: header values are one line of text")
            }
            headers.add(name: name, value: value)
        }
        if let authorization = target.basicAuthorization, !headers.contains(name: "authorization") {
            headers.add(name: "Authorization", value: authorization)
        }
        do {
            return try HTTPClient.Request(url: target.url, method: HTTPMethod(rawValue: method), headers: headers,
                                          body: request.body.map { .bytes($0) })
        } catch {
            throw ServiceError(.invalidArgument, "'\(clipped(HTTPTarget.redacted(request.url)))' cannot be requested: \(error)")
        }
    }

    /// RFC 9110 token characters: what method and header names are made of.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// Stops a request in flight; callable from any thread, more than once.
typealias HTTPCancellation = @Sendable () -> Void
