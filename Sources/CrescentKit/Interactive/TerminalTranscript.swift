import Synchronization

/// What a run printed while its app had the whole terminal, kept to be written out once the
/// terminal is given back (an error's traceback must not vanish with the alternate screen).
/// Bounded: past ``limit`` bytes the oldest text goes.
final class TerminalTranscript: Sendable {
    static let limit = 64 * 1024
    private let state = Mutex<(pieces: [(Console.Stream, String)], bytes: Int)>(([], 0))

    func append(_ stream: Console.Stream, _ text: String) {
        state.withLock { state in
            state.pieces.append((stream, text))
            state.bytes += text.utf8.count
            while state.bytes > Self.limit, state.pieces.count > 1 {
                state.bytes -= state.pieces.removeFirst().1.utf8.count
            }
        }
    }

    /// The text so far, in order; the transcript is empty afterwards.
    func take() -> [(Console.Stream, String)] {
        state.withLock { state in
            defer { state = ([], 0) }
            return state.pieces
        }
    }
}
