import CPlatform
import Dispatch
import LineEditing
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A yes/no question put to the person at the terminal while the loop waits for the answer: the
/// first touch of a plugin whose permissions are not granted (DESIGN.md, Plugins › Permissions:
/// "on a terminal the first touch asks y/n"). As with sudo's password or Deno's permission
/// prompt, the run waits: a plugin half started while timers and clients went on would be worse.
/// A question nobody answers within ``answerWait`` is a no.
///
/// The answer is one key: `y` is yes; `n`, Enter, Esc, Ctrl-C and Ctrl-D are no; other keys are
/// ignored. A REPL or a controller app reads the terminal on a thread of its own, which offers
/// its input here first (``offer(_:)``) and shows the question its own way (``Reader``); a run
/// without such a reader reads the key itself, in raw mode for that key only, after dropping
/// keys typed ahead (they were not typed as an answer).
final class TerminalQuestion: Sendable {
    /// The one terminal of the process.
    static let shared = TerminalQuestion()

    /// How long a question waits for its answer.
    static let answerWait = Duration.seconds(120)
    /// How often a wait looks whether its time is up or the reader went away, in milliseconds.
    private static let waitStep = 250
    /// The steps of ``waitStep`` in ``answerWait``.
    private static let waitSteps = Int(answerWait.components.seconds) * 1000 / waitStep

    /// The thread that reads the terminal for a REPL or a controller app, as the asking side
    /// sees it. Both closures run on the asking (the host's) thread.
    struct Reader: Sendable {
        /// Shows the question (a few lines, the last one ending in `[y/N] `).
        let show: @Sendable (String) -> Void
        /// Shows the answer and puts back what the question covered.
        let answered: @Sendable (Bool) -> Void
    }

    private enum Phase {
        case idle
        case waiting
        case answered(Bool)
    }

    private struct State {
        var phase = Phase.idle
        var reader: (id: Int, reader: Reader)?
        var nextReader = 0
    }

    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)

    /// Whether there is a person to ask: the input is a terminal and this process may take it
    /// (a job started with `&` never takes the keys from the shell).
    var hasPerson: Bool {
        isatty(0) == 1 && Terminal.standard.isForeground
    }

    /// A reader thread starts: while it runs, questions go through it. Answers its id for
    /// ``readerEnded(_:)``.
    func readerStarted(_ reader: Reader) -> Int {
        state.withLock { state in
            state.nextReader += 1
            state.reader = (state.nextReader, reader)
            return state.nextReader
        }
    }

    /// A reader thread ends (the session ended or the input did): a waiting question is a no.
    func readerEnded(_ id: Int) {
        state.withLock { state in
            guard state.reader?.id == id else { return }
            state.reader = nil
            if case .waiting = state.phase {
                state.phase = .answered(false)
                wakeUp.signal()
            }
        }
    }

    /// Input a reader thread read: taken as the answer while a question waits (true: the bytes
    /// were for the question, the reader drops them), else left to the reader.
    func offer(_ bytes: [UInt8]) -> Bool {
        state.withLock { state in
            guard case .waiting = state.phase else { return false }
            if let answer = bytes.lazy.compactMap(Self.answer(to:)).first {
                state.phase = .answered(answer)
                wakeUp.signal()
            }
            return true
        }
    }

    /// What a key says: yes, no, or nothing (ignored).
    static func answer(to byte: UInt8) -> Bool? {
        switch byte {
        case UInt8(ascii: "y"), UInt8(ascii: "Y"): true
        case UInt8(ascii: "n"), UInt8(ascii: "N"), UInt8(ascii: "q"), 13, 10, 27, 3, 4: false
        default: nil
        }
    }

    /// Asks `question` (lines without the `[y/N]`) and answers whether the person typed `y`.
    /// Blocks the calling thread (the host's loop) until the answer, at most ``answerWait``.
    /// `plainOutput` shows the question when no reader thread runs (stderr, cleared of a live
    /// view).
    /// The wait is not counted against any time limit (``QuestionTime``).
    func ask(_ question: String, plainOutput: (String) -> Void) -> Bool {
        QuestionTime.shared.started()
        defer { QuestionTime.shared.ended() }
        let reader = state.withLock { state -> Reader? in
            state.phase = .waiting
            return state.reader?.reader
        }
        guard let reader else {
            state.withLock { $0.phase = .idle }
            return askDirectly(question, output: plainOutput)
        }
        reader.show(question + " [y/N] ")
        let answer = waitForReader()
        reader.answered(answer)
        return answer
    }

    /// Waits for a reader's ``offer(_:)`` (or its end), at most ``answerWait``.
    private func waitForReader() -> Bool {
        for _ in 0..<Self.waitSteps {
            _ = wakeUp.wait(timeout: .now() + .milliseconds(Self.waitStep))
            let answer = state.withLock { state -> Bool? in
                guard case .answered(let answer) = state.phase else { return nil }
                state.phase = .idle
                return answer
            }
            if let answer { return answer }
        }
        return state.withLock { state in
            defer { state.phase = .idle }
            if case .answered(let answer) = state.phase { return answer }
            return false
        }
    }

    /// Asks on a terminal nobody else reads: one key in raw mode, keys typed ahead dropped.
    private func askDirectly(_ question: String, output: (String) -> Void) -> Bool {
        // The question goes to stderr: a person who cannot see it is not asked.
        guard isatty(2) == 1 else { return false }
        let terminal = Terminal.standard
        guard let saved = try? terminal.enableRawMode() else { return false }
        // An exit meanwhile (SIGTERM past its grace period) gives the terminal back too.
        TerminalSession.armGuard(terminal, restoring: saved, writing: "")
        defer {
            crescent_terminal_disarm()
            terminal.restore(saved)
        }
        tcflush(terminal.input, TCIFLUSH)
        output(question + " [y/N] ")
        var answer: Bool?
        for _ in 0..<Self.waitSteps where answer == nil {
            var ready = pollfd(fd: terminal.input, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, Int32(Self.waitStep)) > 0 else { continue }
            guard let bytes = terminal.read(maximum: 64) else {
                answer = false  // the input ended
                break
            }
            answer = bytes.lazy.compactMap(Self.answer(to:)).first
        }
        let yes = answer ?? false
        output(yes ? "y\n" : "n\n")
        return yes
    }
}
