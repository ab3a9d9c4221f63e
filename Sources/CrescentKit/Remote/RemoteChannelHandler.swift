import NIOCore
import Synchronization

/// The socket side of one client, on the host loop: splits what the client sends into lines
/// (with a ``JSONRPCLineDecoder``), hands each to the server, and writes the outbox when the
/// socket can take more.
///
/// The lines are split here rather than by a `ByteToMessageHandler` in front: a request then
/// reaches the server in the same call that read it, one pipeline step fewer on every round trip.
final class RemoteChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let connection: RemoteConnection
    private let received: @Sendable (RemoteConnection, ByteBuffer) -> Void
    private let closed: @Sendable (RemoteConnection) -> Void
    private var decoder = JSONRPCLineDecoder()
    /// The start of a line whose end has not arrived yet (a copy: the channel reuses its buffers).
    private var partial: ByteBuffer?
    /// A line was too long: the connection is closing and nothing more it sent is read.
    private var refused = false

    init(connection: RemoteConnection, received: @escaping @Sendable (RemoteConnection, ByteBuffer) -> Void,
         closed: @escaping @Sendable (RemoteConnection) -> Void) {
        self.connection = connection
        self.received = received
        self.closed = closed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        var bytes = unwrapInboundIn(data)
        if var pending = partial {
            partial = nil
            pending.writeBuffer(&bytes)
            bytes = pending
        }
        deliverLines(in: &bytes, atEnd: false)
        guard !refused, bytes.readableBytes > 0 else { return }
        // Kept as a copy of its own: the channel reuses the buffers it reads into.
        var rest = context.channel.allocator.buffer(capacity: bytes.readableBytes)
        rest.writeBuffer(&bytes)
        partial = rest
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
        // A last line without its newline still counts when the stream ends.
        if var pending = partial, !refused {
            partial = nil
            deliverLines(in: &pending, atEnd: true)
        }
        closed(connection)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Hands the server each whole line in `buffer`, in order.
    private func deliverLines(in buffer: inout ByteBuffer, atEnd: Bool) {
        guard let first = nextLine(in: &buffer, atEnd: atEnd) else { return }
        guard let second = nextLine(in: &buffer, atEnd: atEnd) else { return deliver(first) }
        // Several lines in one read: an `interrupt` among them is meant for code an earlier one
        // starts, which holds the loop; the interrupt watch cannot peek at what is read already.
        // An interrupt clears the request when it is handled, so the request is made again just
        // before each line that a later interrupt of the same read is meant for (an interrupt
        // first in the read, then an eval and its interrupt, must still stop the eval).
        var lines = [first, second]
        while let line = nextLine(in: &buffer, atEnd: atEnd) { lines.append(line) }
        let interrupts = lines.map(Self.isInterrupt)
        let last = interrupts.lastIndex(of: true)
        for (index, line) in lines.enumerated() {
            if let last, index < last, !interrupts[index] { connection.interruptRequested.store(true, ordering: .relaxed) }
            deliver(line)
        }
    }

    private func deliver(_ line: ByteBuffer) {
        // A client being disconnected (its `disconnect` line waits to be written) is not served.
        guard !connection.isClosed else { return }
        connection.reading()
        received(connection, line)
    }

    /// The next whole line, or nil (also once a line too long has closed the connection).
    private func nextLine(in buffer: inout ByteBuffer, atEnd: Bool) -> ByteBuffer? {
        guard !refused else { return nil }
        do {
            return atEnd ? try decoder.decodeLast(buffer: &buffer, seenEOF: true) : try decoder.decode(buffer: &buffer)
        } catch {
            refused = true
            connection.close(reason: "\(error)")
            return nil
        }
    }

    private static func isInterrupt(_ line: ByteBuffer) -> Bool {
        if case .success(.request(_, "interrupt", _)) = JSONRPCMessage.parse(line: line.readableBytesView) { return true }
        return false
    }
}
