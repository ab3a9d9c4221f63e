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
        /// Bytes dropped from the start (past ``limit``).
        var dropped = 0
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
                state.dropped += state.pieces[state.head].1.utf8.count
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

    /// The text so far, in order; the transcript is empty afterwards. When its start was
    /// dropped, a first line on stderr says how much, and the kept text starts at a whole line
    /// (the rest of a line cut in two is dropped too): nothing is lost without a word.
    func take() -> [(Console.Stream, String)] {
        state.withLock { state in
            defer { state = State() }
            var kept = Array(state.pieces[state.head...])
            guard state.dropped > 0 else { return kept }
            var dropped = state.dropped
            while let first = kept.first {
                guard let newline = first.1.utf8.firstIndex(of: UInt8(ascii: "\n")) else {
                    dropped += first.1.utf8.count
                    kept.removeFirst()
                    continue
                }
                let rest = String(first.1[first.1.index(after: newline)...])
                dropped += first.1.utf8.count - rest.utf8.count
                kept[0].1 = rest
                break
            }
            let note = "crescent: the first \(dropped) bytes printed while the app had the terminal were dropped "
                + "(the last \(Self.limit / 1024) KiB are kept)\n"
            return [(.error, note)] + kept
        }
    }
}
