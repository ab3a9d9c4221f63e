import NIOCore

/// Splits a byte stream into lines (LF or CRLF). A line longer than 64 KiB is dropped whole, up to
/// its end, and counted (``dropped``): a peer that sends a 200 MB line costs at most 64 KiB of
/// memory, and its next line is read as usual.
struct LineSplitter {
    private var pending: [UInt8] = []
    /// Inside a line longer than ``maximumLine``: its bytes are dropped up to its line ending.
    private var discarding = false
    /// How many lines were dropped for their length so far.
    private(set) var dropped = 0
    static let maximumLine = 65_536

    /// The complete lines `buffer` ends, without their line endings.
    mutating func append(_ buffer: ByteBuffer) -> [String] {
        append(bytes: buffer.readableBytesView)
    }

    /// The complete lines `bytes` end, without their line endings.
    mutating func append<Bytes: Collection<UInt8>>(bytes: Bytes) -> [String] {
        var lines: [String] = []
        var rest = bytes[...]
        while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
            let piece = rest[rest.startIndex..<newline]
            if discarding {
                discarding = false                          // the end of the line dropped
            } else if pending.count + piece.count > Self.maximumLine {
                dropped += 1
                pending.removeAll()
            } else {
                pending += piece
                if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                lines.append(String(decoding: pending, as: UTF8.self))
                pending.removeAll(keepingCapacity: true)
            }
            rest = rest[rest.index(after: newline)...]
        }
        if !discarding {
            if pending.count + rest.count > Self.maximumLine {
                discarding = true
                dropped += 1
                pending.removeAll()
            } else {
                pending += rest
            }
        }
        return lines
    }

    /// What is left after the last line ending (a file's last line without one).
    mutating func finish() -> String? {
        defer { pending.removeAll() }
        return pending.isEmpty || discarding ? nil : String(decoding: pending, as: UTF8.self)
    }
}
