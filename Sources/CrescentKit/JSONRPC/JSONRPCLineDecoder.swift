public import NIOCore

/// Splits a JSON-RPC byte stream into lines: one message per line, LF or CRLF, each at most
/// ``maximumLength`` bytes, as process plugins and remote-control clients send them.
///
/// A line longer than the bound is an error (``JSONRPCLineTooLong``), raised as soon as the bound
/// is passed rather than after buffering the whole line, so a peer cannot grow the host's memory
/// without limit; the connection or process is then ended. Empty lines are skipped.
///
/// ```swift
/// try await channel.pipeline.addHandler(ByteToMessageHandler(JSONRPCLineDecoder()))
/// ```
public struct JSONRPCLineDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    /// The longest line accepted: 16 MiB.
    public static let defaultMaximumLength = 16 << 20

    public let maximumLength: Int
    /// How far the buffer has been searched for a line ending already.
    private var scanned = 0

    public init(maximumLength: Int = JSONRPCLineDecoder.defaultMaximumLength) {
        self.maximumLength = maximumLength
    }

    public mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        while true {
            let view = buffer.readableBytesView
            guard let newline = view.dropFirst(scanned).firstIndex(of: UInt8(ascii: "\n")) else {
                scanned = view.count
                if view.count > maximumLength { throw JSONRPCLineTooLong(maximumLength: maximumLength) }
                return nil
            }
            let length = newline - view.startIndex
            scanned = 0
            guard length <= maximumLength else { throw JSONRPCLineTooLong(maximumLength: maximumLength) }
            let dropsReturn = length > 0 && view[newline - 1] == UInt8(ascii: "\r")
            // Invariant: `length` bytes are readable (the newline lies past them).
            guard var line = buffer.readSlice(length: length) else { return nil }
            buffer.moveReaderIndex(forwardBy: 1)
            if dropsReturn { line.moveWriterIndex(to: line.writerIndex - 1) }
            if line.readableBytes > 0 { return line }
        }
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
        if let line = try decode(buffer: &buffer) { return line }
        // A last line without its newline still counts when the stream ends.
        guard seenEOF, buffer.readableBytes > 0 else { return nil }
        scanned = 0
        let rest = buffer.readSlice(length: buffer.readableBytes)
        return rest.flatMap { $0.readableBytes > 0 ? $0 : nil }
    }
}

/// A peer sent a line longer than the decoder's bound.
public struct JSONRPCLineTooLong: Error, CustomStringConvertible, Sendable {
    public let maximumLength: Int
    public var description: String { "a line longer than \(maximumLength) bytes" }
}
