import NIOCore

/// The socket side of one client, on the server's I/O loop: splits the bytes into lines, hands
/// each to the server, and writes the outbox when the socket can take more.
final class RemoteChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    /// A line longer than this is not a message: the client is disconnected.
    static let maxLineBytes = 16 << 20

    private let connection: RemoteConnection
    private let received: @Sendable (RemoteConnection, String) -> Void
    private let closed: @Sendable (RemoteConnection) -> Void
    private var pending = ByteBuffer()

    init(connection: RemoteConnection, received: @escaping @Sendable (RemoteConnection, String) -> Void,
         closed: @escaping @Sendable (RemoteConnection) -> Void) {
        self.connection = connection
        self.received = received
        self.closed = closed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        while let newline = pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - pending.readerIndex
            var line = pending.readString(length: length) ?? ""
            pending.moveReaderIndex(forwardBy: 1)
            if line.hasSuffix("\r") { line.removeLast() }
            if !line.allSatisfy({ $0 == " " || $0 == "\t" }) { received(connection, line) }
        }
        pending.discardReadBytes()
        if pending.readableBytes > Self.maxLineBytes {
            pending.clear()
            connection.close(reason: "a line longer than \(Self.maxLineBytes >> 20) MiB")
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { connection.flush() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed(connection)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
