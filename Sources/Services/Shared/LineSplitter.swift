import NIOCore

/// Splits a byte stream into lines (LF or CRLF); a line longer than 64 KiB is cut.
struct LineSplitter {
    private var pending: [UInt8] = []
    static let maximumLine = 65_536

    /// The complete lines `buffer` ends, without their line endings.
    mutating func append(_ buffer: ByteBuffer) -> [String] {
        pending += buffer.readableBytesView
        var lines: [String] = []
        var start = 0
        while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
            var end = newline
            if end > start, pending[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            lines.append(String(decoding: pending[start..<end], as: UTF8.self))
            start = newline + 1
        }
        pending.removeFirst(start)
        if pending.count > Self.maximumLine {
            lines.append(String(decoding: pending, as: UTF8.self))
            pending.removeAll()
        }
        return lines
    }
}
