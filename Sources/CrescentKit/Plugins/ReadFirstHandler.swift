import NIOCore

/// Passes on bytes read from a pipe before it was handed to the loop (a plugin's half-written
/// line when the handshake stopped holding the loop) ahead of anything the channel reads, so
/// the decoder after it sees one unbroken stream; then leaves the pipeline.
final class ReadFirstHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        // The channel reads its descriptor only after this event has gone through the pipeline.
        context.fireChannelRead(wrapInboundOut(context.channel.allocator.buffer(bytes: bytes)))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
