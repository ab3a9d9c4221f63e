import NIOCore

/// One line a process plugin wrote to stderr, for the log.
struct LogLine: Sendable {
    /// The line without its ending, at most the decoder's bound.
    let text: ByteBuffer
    /// True when the line was longer and its rest was dropped.
    let isCut: Bool
}

/// Splits a process plugin's stderr into lines for the log, each at most ``maximumLength``
/// bytes: a longer line is cut there (its head goes to the log with a mark, its rest is read and
/// dropped), so a program that writes a huge line keeps its stderr open and runs on, and the
/// host holds at most one bound's worth of it. LF or CRLF; empty lines are skipped.
struct LogLineDecoder: NIOSingleStepByteToMessageDecoder {
    typealias InboundOut = LogLine

    /// The longest line logged whole: 64 KiB.
    static let defaultMaximumLength = 64 << 10

    let maximumLength: Int
    /// True while the rest of a cut line is being dropped.
    private var dropping = false
    /// How far the buffer has been searched for a line ending already.
    private var scanned = 0

    init(maximumLength: Int = LogLineDecoder.defaultMaximumLength) {
        self.maximumLength = maximumLength
    }

    mutating func decode(buffer: inout ByteBuffer) throws -> LogLine? {
        while true {
            let view = buffer.readableBytesView
            let newline = view.dropFirst(scanned).firstIndex(of: UInt8(ascii: "\n"))
            if dropping {
                guard let newline else {
                    buffer.moveReaderIndex(forwardBy: view.count)
                    scanned = 0
                    return nil
                }
                buffer.moveReaderIndex(forwardBy: newline - view.startIndex + 1)
                scanned = 0
                dropping = false
                continue
            }
            guard let newline else {
                guard view.count > maximumLength else {
                    scanned = view.count
                    return nil
                }
                // Invariant: more than `maximumLength` bytes are readable.
                guard let head = buffer.readSlice(length: maximumLength) else { return nil }
                scanned = 0
                dropping = true
                return LogLine(text: head, isCut: true)
            }
            scanned = 0
            let offset = newline - view.startIndex
            var length = offset
            let isCut = length > maximumLength
            if !isCut, length > 0, view[newline - 1] == UInt8(ascii: "\r") { length -= 1 }
            // Invariant: the newline lies past the line, so its bytes are readable.
            guard let line = buffer.getSlice(at: buffer.readerIndex, length: min(length, maximumLength)) else { return nil }
            buffer.moveReaderIndex(forwardBy: offset + 1)
            if line.readableBytes > 0 { return LogLine(text: line, isCut: isCut) }
        }
    }

    mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> LogLine? {
        if let line = try decode(buffer: &buffer) { return line }
        // A last line without its newline still counts when the stream ends.
        guard seenEOF, !dropping, buffer.readableBytes > 0, let rest = buffer.readSlice(length: buffer.readableBytes) else { return nil }
        scanned = 0
        return LogLine(text: rest, isCut: false)
    }
}
