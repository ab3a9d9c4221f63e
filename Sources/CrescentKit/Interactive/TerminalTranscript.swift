import Synchronization

/// What a run printed while its app had the whole terminal, kept to be written out once the
/// terminal is given back (an error's traceback must not vanish with the alternate screen), and
/// the line the status line shows of it.
///
/// Bounded: past ``limit`` bytes the oldest text goes. Every write costs time in proportion to
/// its own length only (the pieces are a queue, the status line's message is taken once per loop
/// turn), so 20,000 `print`s from one key handler take as long as they take on a pipe.
final class TerminalTranscript: Sendable {
    static let limit = 64 * 1024
    private let state = Mutex(State())

    private struct State {
        /// The pieces kept are `pieces[head...]`: dropping the oldest moves nothing, and the
        /// dropped slots are reclaimed once they are half the array.
        var pieces: [(Console.Stream, String)] = []
        var head = 0
        var bytes = 0
        var message = PrintedMessage()
    }

    /// Keeps `text`; true when it gives the status line a message to show where none was waiting
    /// (the caller then makes sure a loop turn ends, which shows it: ``takeMessage()``).
    func append(_ stream: Console.Stream, _ text: String) -> Bool {
        state.withLock { state in
            state.pieces.append((stream, text))
            state.bytes += text.utf8.count
            while state.bytes > Self.limit, state.pieces.count - state.head > 1 {
                state.bytes -= state.pieces[state.head].1.utf8.count
                state.pieces[state.head].1 = ""
                state.head += 1
            }
            if state.head >= 1024, state.head * 2 >= state.pieces.count {
                state.pieces.removeFirst(state.head)
                state.head = 0
            }
            return state.message.add(stream, text)
        }
    }

    /// The message printed since the last call, or nil when there is none new.
    func takeMessage() -> String? {
        state.withLock { $0.message.take() }
    }

    /// The text so far, in order; the transcript is empty afterwards.
    func take() -> [(Console.Stream, String)] {
        state.withLock { state in
            defer { state = State() }
            return Array(state.pieces[state.head...])
        }
    }
}

/// The status line's message from what was printed: the first line with text of the latest
/// write that had any, read together with the start of its line (`print("line", 7)` writes
/// `line`, a tab, `7` and a newline, and shows `line 7`); for stderr (a handler's error and its
/// traceback) the first line of the write. Tabs show as spaces. Cut at ``maxBytes``, so one
/// write costs its own length, however long the lines printed before it.
struct PrintedMessage {
    static let maxBytes = 1024
    /// The text after the last newline printed (cut at ``maxBytes``).
    private var partial = ""
    private var latest = ""
    private var isNew = false

    /// Takes `text` written to `stream`; true when a message became waiting (none was before).
    mutating func add(_ stream: Console.Stream, _ text: String) -> Bool {
        let lastNewline = text.utf8.lastIndex(of: UInt8(ascii: "\n"))
        let hasText = text.utf8.contains { !Self.isBlank($0) }
        if hasText {
            let line = stream == .error ? Self.firstLine(of: text[...]) : Self.firstLine(of: Substring(partial) + text[...])
            latest = line
        }
        if stream == .output {
            if let lastNewline {
                partial = Self.cut(text[text.utf8.index(after: lastNewline)...])
            } else if partial.utf8.count < Self.maxBytes {
                partial = Self.cut(Substring(partial + text))
            }
        }
        guard hasText, !isNew else { return false }
        isNew = true
        return true
    }

    /// The message, if a new one was printed since the last take.
    mutating func take() -> String? {
        guard isNew else { return nil }
        isNew = false
        return latest
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
    }

    /// The first line of `text` that is not blank, cut at ``maxBytes``; tabs as spaces.
    private static func firstLine(of text: Substring) -> String {
        var rest = text
        while !rest.isEmpty {
            let end = rest.firstIndex(where: \.isNewline) ?? rest.endIndex
            let line = rest[..<end]
            if line.utf8.contains(where: { !isBlank($0) }) { return String(cut(line).map { $0 == "\t" ? " " : $0 }) }
            rest = end == rest.endIndex ? "" : rest[rest.index(after: end)...]
        }
        return ""
    }

    /// `text`'s first ``maxBytes`` bytes, cut at a scalar's end (the scalar view rounds the
    /// index down to one).
    private static func cut(_ text: Substring) -> String {
        guard text.utf8.count > maxBytes else { return String(text) }
        let end = text.utf8.index(text.utf8.startIndex, offsetBy: maxBytes)
        return String(text.unicodeScalars[..<end])
    }
}
