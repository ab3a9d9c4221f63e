/// One output pipe of a program as the reactor reads it: kept whole up to a limit (`run`), or
/// split into lines (`spawn`), never holding more than the limit.
struct OutputPipe {
    /// `"stdout"` or `"stderr"`, as `didOutput` names it.
    let name: String
    let descriptor: Int32
    let limit: Int
    /// True: cut into lines for `didOutput`; false: kept for the result.
    let splitsLines: Bool
    private(set) var kept: [UInt8] = []
    /// Set once bytes were dropped past `limit`.
    private(set) var truncated = false
    /// For lines: the current line was cut, so its rest is dropped up to the next newline.
    private var skippingRest = false
    private(set) var isOpen = true
    /// Output kept (`run`) past this size reserves room for the rest at once…
    static let firstReserve = 65536
    /// …up to the limit or this, whichever is smaller (beyond it, it grows as arrays do).
    static let wholeReserve = 64 << 20

    init(name: String, descriptor: Int32, limit: Int, splitsLines: Bool) {
        self.name = name
        self.descriptor = descriptor
        self.limit = limit
        self.splitsLines = splitsLines
    }

    /// Takes `bytes` just read; for lines, calls `line` with each complete line (its newline
    /// and a carriage return before it removed) and whether it was cut.
    mutating func take(_ bytes: UnsafeRawBufferPointer, line: (ArraySlice<UInt8>, Bool) -> Void) {
        guard splitsLines else {
            let room = max(limit - kept.count, 0)
            if bytes.count > room { truncated = true }
            let part = bytes.prefix(room)
            if kept.count >= Self.firstReserve, kept.count + part.count > kept.capacity, kept.capacity < Self.wholeReserve {
                // Past the first read, room for all that may come, at once: growing by doubling
                // copied the output again at each step into fresh pages (a 7 MB run spent a
                // quarter of its time in page faults). Pages reserved and never written cost no
                // memory.
                kept.reserveCapacity(min(limit, Self.wholeReserve))
            }
            kept.append(contentsOf: part)
            return
        }
        var start = bytes.startIndex
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            append(bytes[start..<newline])
            emit(line)
            skippingRest = false
            start = newline + 1
        }
        append(bytes[start...])
    }

    /// The pipe reached its end (after ``flushLine(line:)`` gave its last line).
    mutating func close() {
        isOpen = false
    }

    /// A last line without a newline is still a line: at the pipe's end, or when the program
    /// has exited but its group still holds the pipe (the rest is then read and dropped).
    mutating func flushLine(line: (ArraySlice<UInt8>, Bool) -> Void) {
        if splitsLines, !kept.isEmpty || skippingRest { emit(line) }
        skippingRest = false
    }

    private mutating func append(_ bytes: Slice<UnsafeRawBufferPointer>) {
        guard !skippingRest, !bytes.isEmpty else { return }
        let room = max(limit - kept.count, 0)
        if bytes.count > room {
            truncated = true
            skippingRest = true
        }
        kept.append(contentsOf: bytes.prefix(room))
    }

    private mutating func emit(_ line: (ArraySlice<UInt8>, Bool) -> Void) {
        var text = kept[...]
        if text.last == UInt8(ascii: "\r") { text = text.dropLast() }
        line(text, skippingRest)
        kept.removeAll(keepingCapacity: true)
    }
}
