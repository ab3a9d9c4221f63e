import Synchronization

/// What a run printed while its app had the whole terminal, kept to be written out once the
/// terminal is given back (an error's traceback must not vanish with the alternate screen), and
/// the line the status line shows of it.
///
/// Bounded: past ``limit`` bytes the oldest lines go, and a line longer than ``lineLimit`` is
/// cut there with a note saying how much of it was dropped, so one long line (a 1 MB error
/// message) cannot push out the whole lines printed after it (its traceback, the next error).
/// Every write costs time in proportion to its own length only (the pieces are a queue, the
/// status line's message is taken once per loop turn), so 20,000 `print`s from one key handler
/// take as long as they take on a pipe.
final class TerminalTranscript: Sendable {
    static let limit = 64 * 1024
    /// The longest line kept whole: a quarter of the window, so at least three quarters of it
    /// hold what was printed after a long line.
    static let lineLimit = limit / 4
    private let state = Mutex(State())

    /// A line, or a part of one written by itself (`io.write` without a newline).
    private struct Piece {
        var stream: Console.Stream
        var text: String
        /// Whether its line starts with it: a piece that continues a line whose start was
        /// dropped is dropped too, so the text written out starts at whole lines.
        var startsLine: Bool
    }

    /// The line each stream is in the middle of (written without its newline so far).
    private struct OpenLine {
        /// Its bytes kept, up to ``lineLimit``.
        var kept = 0
        /// Its bytes dropped past ``lineLimit``.
        var cut = 0

        var isEmpty: Bool { kept == 0 && cut == 0 }
    }

    private struct State {
        /// The pieces kept are `pieces[head...]`: dropping the oldest moves nothing, and the
        /// dropped slots are reclaimed once they are half the array.
        var pieces: [Piece] = []
        var head = 0
        var bytes = 0
        /// Bytes dropped from the start (past ``limit``).
        var dropped = 0
        var output = OpenLine()
        var error = OpenLine()
        var message = PrintedMessage()

        subscript(line stream: Console.Stream) -> OpenLine {
            get { stream == .output ? output : error }
            set { if stream == .output { output = newValue } else { error = newValue } }
        }

        /// Keeps `text` line by line, cutting a line at ``lineLimit``.
        mutating func keep(_ stream: Console.Stream, _ text: String) {
            var line = self[line: stream]
            var rest = Substring(text)
            while !rest.isEmpty {
                let newline = rest.utf8.firstIndex(of: UInt8(ascii: "\n"))
                let content = rest[..<(newline ?? rest.endIndex)]
                let next = newline.map { rest.utf8.index(after: $0) } ?? rest.endIndex
                rest = rest[next...]
                let startsLine = line.isEmpty
                var piece: String
                let room = TerminalTranscript.lineLimit - line.kept
                if line.cut == 0, content.utf8.count <= room {
                    piece = String(content)
                } else {
                    piece = line.cut == 0 ? Self.prefix(of: content, bytes: room) : ""
                    line.cut += content.utf8.count - piece.utf8.count
                }
                line.kept += piece.utf8.count
                if newline != nil {
                    if line.cut > 0 { piece += Self.cutNote(line.cut) }
                    piece += "\n"
                    line = OpenLine()
                }
                guard !piece.isEmpty else { continue }
                pieces.append(Piece(stream: stream, text: piece, startsLine: startsLine))
                bytes += piece.utf8.count
            }
            self[line: stream] = line
        }

        /// Drops the oldest pieces past ``limit`` (the newest is kept, at most a line's length).
        mutating func evict() {
            while bytes > TerminalTranscript.limit, pieces.count - head > 1 {
                let size = pieces[head].text.utf8.count
                bytes -= size
                dropped += size
                pieces[head].text = ""
                head += 1
            }
            if head >= 1024, head * 2 >= pieces.count {
                pieces.removeFirst(head)
                head = 0
            }
        }

        /// `text`'s first `bytes` bytes, cut at a scalar's end.
        static func prefix(of text: Substring, bytes: Int) -> String {
            guard bytes > 0 else { return "" }
            let end = text.utf8.index(text.utf8.startIndex, offsetBy: min(bytes, text.utf8.count))
            return String(text.unicodeScalars[..<end])
        }

        static func cutNote(_ bytes: Int) -> String {
            " … (crescent: \(bytes) more bytes of this line were dropped)"
        }
    }

    /// Keeps `text`; true when it gives the status line a message to show where none was waiting
    /// (the caller then makes sure a loop turn ends, which shows it: ``takeMessage()``).
    func append(_ stream: Console.Stream, _ text: String) -> Bool {
        state.withLock { state in
            state.keep(stream, text)
            state.evict()
            return state.message.add(stream, text)
        }
    }

    /// The message printed since the last call, or nil when there is none new.
    func takeMessage() -> String? {
        state.withLock { $0.message.take() }
    }

    /// The text so far, in order; the transcript is empty afterwards. When its start was
    /// dropped, a first line on stderr says how much, and the kept text starts at whole lines
    /// (the rest of a line whose start was dropped goes too): nothing is lost without a word.
    /// A line cut at ``lineLimit`` and never ended says so at the end.
    func take() -> [(Console.Stream, String)] {
        state.withLock { state in
            defer { state = State() }
            var dropped = state.dropped
            var waitingForLine: Set<Console.Stream> = [.output, .error]
            var kept: [(Console.Stream, String)] = []
            for piece in state.pieces[state.head...] {
                if waitingForLine.contains(piece.stream) {
                    guard piece.startsLine else {
                        dropped += piece.text.utf8.count
                        continue
                    }
                    waitingForLine.remove(piece.stream)
                }
                kept.append((piece.stream, piece.text))
            }
            for stream in [Console.Stream.output, .error] where state[line: stream].cut > 0 {
                kept.append((stream, State.cutNote(state[line: stream].cut) + "\n"))
            }
            guard dropped > 0 else { return kept }
            let note = "crescent: the first \(dropped) bytes printed while the app had the terminal were dropped "
                + "(the last \(Self.limit / 1024) KiB are kept)\n"
            return [(.error, note)] + kept
        }
    }
}
