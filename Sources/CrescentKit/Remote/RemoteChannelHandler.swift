import NIOCore

/// The socket side of one client, on the host loop: takes the lines
/// ``JSONRPCLineDecoder`` splits, hands each to the server, and writes the outbox when the
/// socket can take more.
final class RemoteChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let connection: RemoteConnection
    private let received: @Sendable (RemoteConnection, ByteBuffer) -> Void
    private let closed: @Sendable (RemoteConnection) -> Void

    init(connection: RemoteConnection, received: @escaping @Sendable (RemoteConnection, ByteBuffer) -> Void,
         closed: @escaping @Sendable (RemoteConnection) -> Void) {
        self.connection = connection
        self.received = received
        self.closed = closed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connection.reading()
        received(connection, unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        connection.readCompleted()
        context.fireChannelReadComplete()
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
        if let tooLong = error as? JSONRPCLineTooLong {
            connection.close(reason: "\(tooLong)")
        } else {
            context.close(promise: nil)
        }
    }
}
