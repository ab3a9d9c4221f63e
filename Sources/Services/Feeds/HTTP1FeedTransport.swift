import Foundation
public import Model
import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 client over SwiftNIO for feed fetches: one connection per request
/// (`Connection: close`), redirects followed (at most ``maxRedirects``), an overall time limit,
/// a body limit. Plain `http` only: `https` URLs are refused with `invalid_argument` until the
/// feeds service fetches through the `http` service (AsyncHTTPClient, with TLS).
///
/// It runs on NIO's shared event loop group, off the host's loop.
public struct HTTP1FeedTransport: FeedTransport {
    public static let maxRedirects = 10

    private let group: any EventLoopGroup

    /// A transport on NIO's shared event loop group.
    public init() {
        group = MultiThreadedEventLoopGroup.singleton
    }

    public func fetch(_ request: FeedRequest) async throws(ServiceError) -> FeedResponse {
        let deadline = NIODeadline.now() + TimeAmount.nanoseconds(Int64(request.timeout.components.seconds) * 1_000_000_000
                                                                  + request.timeout.components.attoseconds / 1_000_000_000)
        var url = request.url
        var conditional = request
        for _ in 0...Self.maxRedirects {
            conditional.url = url
            let response = try await fetchOnce(conditional, deadline: deadline)
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["location"] else {
                return response
            }
            url = FeedEntryDraft.resolve(location, against: URL(string: url))
            // A cached validator belongs to the URL it came from.
            conditional.etag = nil
            conditional.lastModified = nil
        }
        throw ServiceError(.network, "more than \(Self.maxRedirects) redirects from \(request.url)")
    }

    /// One request and its response, without following redirects.
    private func fetchOnce(_ request: FeedRequest, deadline: NIODeadline) async throws(ServiceError) -> FeedResponse {
        let target = try Target(request.url)
        let promise = group.next().makePromise(of: FeedResponse.self)
        let maxBytes = request.maxBytes
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(max(.milliseconds(1), deadline - .now()))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ResponseCollector(promise: promise, maxBytes: maxBytes, url: request.url))
                    }
                }
                .connect(host: target.host, port: target.port).get()
        } catch {
            promise.fail(error)
            throw Self.describe(error, url: request.url)
        }
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path)
        head.headers.add(name: "Host", value: target.hostHeader)
        head.headers.add(name: "Connection", value: "close")
        head.headers.add(name: "Accept-Encoding", value: "identity")
        for header in request.headers { head.headers.add(name: header.name, value: header.value) }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        let timeout = channel.eventLoop.scheduleTask(deadline: deadline) {
            promise.fail(ServiceError(.timeout, "no complete response from \(request.url) in time"))
            channel.close(promise: nil)
        }
        defer { timeout.cancel() }
        do {
            return try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                promise.fail(ServiceError(.cancelled, "the request was cancelled"))
                channel.close(promise: nil)
            }
        } catch {
            throw Self.describe(error, url: request.url)
        }
    }

    private static func describe(_ error: any Error, url: String) -> ServiceError {
        if let error = error as? ServiceError { return error }
        if case ChannelError.connectTimeout = error { return ServiceError(.timeout, "connecting to \(url) timed out") }
        if let error = error as? NIOConnectionError {
            let cause = error.connectionErrors.first.map { "\($0.error)" } ?? error.dnsAAAAError.map { "\($0)" } ?? "no address"
            return ServiceError(.network, "cannot connect to \(url): \(cause)")
        }
        return ServiceError(.network, "fetching \(url) failed: \(error)")
    }

    /// Where a URL points: host, port, the request target and the `Host` header.
    private struct Target {
        let host: String
        let port: Int
        let path: String
        let hostHeader: String

        init(_ text: String) throws(ServiceError) {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
                throw ServiceError(.invalidArgument, "\(text) is not an absolute http URL")
            }
            guard scheme == "http" else {
                throw ServiceError(.invalidArgument, "\(text): only http URLs can be fetched for now (\(scheme) is not supported)")
            }
            self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
            port = url.port ?? 80
            let path = url.path.isEmpty ? "/" : url.path
            // `URL.path` decodes percent escapes; the request target keeps them as written.
            let encodedPath = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? path
            self.path = (encodedPath.isEmpty ? "/" : encodedPath) + (url.query.map { "?" + $0 } ?? "")
            hostHeader = url.port.map { "\(host):\($0)" } ?? host
        }
    }
}

/// Gathers one response (head and body) and completes the promise at its end.
private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<FeedResponse>
    private let maxBytes: Int
    private let url: String
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []

    init(promise: EventLoopPromise<FeedResponse>, maxBytes: Int, url: String) {
        self.promise = promise
        self.maxBytes = maxBytes
        self.url = url
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let received):
            head = received
        case .body(var buffer):
            guard body.count + buffer.readableBytes <= maxBytes else {
                promise.fail(ServiceError(.io, "the response from \(url) is larger than \(maxBytes) bytes"))
                context.close(promise: nil)
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            promise.succeed(FeedResponse(status: Int(head.status.code), headers: headers, body: body))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ServiceError(.network, "the connection to \(url) closed before the response ended"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(ServiceError(.network, "fetching \(url) failed: \(error)"))
        context.close(promise: nil)
    }
}
