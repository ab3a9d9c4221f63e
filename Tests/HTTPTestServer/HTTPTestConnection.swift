import NIOCore
import NIOHTTP1
import Synchronization

/// One connection of an ``HTTPTestServer``: collects each request, asks the server's closure for
/// the answer and writes it, keeping the connection alive as HTTP/1.1 does.
final class HTTPTestConnection: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ServerState
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(server: ServerState) {
        self.server = server
    }

    func channelActive(context: ChannelHandlerContext) {
        server.log.withLock { $0.connectionsOpened += 1 }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        server.log.withLock { $0.connectionsClosed += 1 }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            body = []
        case .body(let buffer):
            body += buffer.readableBytesView
        case .end:
            guard let requestHead = head else { return }
            head = nil
            let request = HTTPTestServer.Request(method: requestHead.method.rawValue, uri: requestHead.uri,
                                                 headers: requestHead.headers.map { ($0.name, $0.value) }, body: body)
            if server.recordsRequests { server.log.withLock { $0.requests.append(request) } }
            answer(server.answer(request), keepAlive: requestHead.isKeepAlive, context: context)
        }
    }

    private func answer(_ answer: HTTPTestServer.Answer, keepAlive: Bool, context: ChannelHandlerContext) {
        if case .hangUp = answer {
            context.close(promise: nil)
            return
        }
        guard case .respond(let status, let extraHeaders, var body, let chunked) = answer else { return }
        // These statuses have no body, whatever the closure gave (RFC 9110, section 6.4.1).
        if status == 204 || status == 304 || (100..<200).contains(status) { body = [] }
        var headers = HTTPHeaders(extraHeaders)
        if chunked {
            headers.replaceOrAdd(name: "transfer-encoding", value: "chunked")
        } else if !headers.contains(name: "content-length") {
            headers.replaceOrAdd(name: "content-length", value: String(body.count))
        }
        if !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let chunkSize = chunked ? 64 << 10 : max(body.count, 1)
        var offset = 0
        while offset < body.count {
            let end = min(offset + chunkSize, body.count)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body[offset..<end])))), promise: nil)
            offset = end
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        if !keepAlive {
            let channel = context.channel
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
