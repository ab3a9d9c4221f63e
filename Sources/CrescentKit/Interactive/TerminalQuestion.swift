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
/// The answer is a line, as apt's `[Y/n]` and ssh's `yes/no` take it: `y` or `yes` and then Enter
/// is yes; any other key (Enter alone, `n`, Esc, Ctrl-C, Ctrl-D, a bracketed paste, which starts
/// with Esc, a letter that `yes` does not go on with) is no at once. An Enter that comes in the
/// same read as the letters before it was pasted, not typed, and is no too. A single key used to
/// be the answer with other keys ignored, so text typed or pasted while the question was up
/// granted at its first `y` ("copy this", "today"; attack new27g D3). A line, not a lone `y`
/// with nothing else pending: a word typed on that begins with `y` ("yellow") or a `y` and an
/// Enter meant for something else are caught the same way, and `plugins allow` reads one too.
///
/// A REPL or a controller app reads the terminal on a thread of its own, which offers
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
        /// The letters of the answer typed so far.
        var typed: [UInt8] = []
    }

    /// How a question ended.
    enum Outcome: Sendable, Equatable {
        /// `y` or `yes` and Enter.
        case yes
        /// Any other answer, or none within ``answerWait``.
        case no
        /// The one who asked went away first (a remote client that hung up or interrupted).
        case abandoned
        /// Nobody could be asked: why (the question is not shown where a person would see it).
        case notAsked(String)
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
            if let answer = Self.answer(to: bytes, typed: &state.typed) {
                state.phase = .answered(answer)
                wakeUp.signal()
            }
            return true
        }
    }

    /// A whole line a reader read from a terminal in its line mode (``ScriptRunner``'s command
    /// reader), without its newline: taken as the answer while a question waits (true: the line
    /// was for the question). Keys cannot be told from a paste there, so the line is the
    /// answer: `y` or `yes`, nothing else (a bracketed paste's markers make it no).
    func offer(line: String) -> Bool {
        state.withLock { state in
            guard case .waiting = state.phase else { return false }
            let word = line.lowercased()
            state.phase = .answered(word == "y" || word == "yes")
            wakeUp.signal()
            return true
        }
    }

    /// What the bytes of one read say, after the letters `typed` before them: yes, no, or not
    /// yet (the letters so far begin `yes`; they are added to `typed`).
    static func answer(to bytes: [UInt8], typed: inout [UInt8]) -> Bool? {
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case 13, 10:
                // Enter in a read of its own after `y` or `yes`; with the letters in one read it
                // was pasted.
                let word = String(decoding: typed, as: UTF8.self).lowercased()
                return index == 0 && (word == "y" || word == "yes")
            case UInt8(ascii: "y"), UInt8(ascii: "Y"), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "s"), UInt8(ascii: "S"):
                typed.append(byte)
                guard "yes".hasPrefix(String(decoding: typed, as: UTF8.self).lowercased()) else { return false }
            default:
                return false
            }
        }
        return nil
    }

    /// What ends the question's last line.
    static let prompt = " Type y or yes, then Enter [y/N] "

    /// Asks `question` (lines without the prompt) and answers how it ended.
    /// Blocks the calling thread (the host's loop) until the answer, at most ``answerWait``.
    /// `plainOutput` shows the question when no reader thread runs (stderr, cleared of a live
    /// view).
    /// The wait is not counted against any time limit (``QuestionTime``). `abandoned`, read
    /// on the calling thread a few times a second, ends the question as no once true.
    func ask(_ question: String, abandoned: () -> Bool = { false }, plainOutput: (String) -> Void) -> Outcome {
        QuestionTime.shared.started()
        defer { QuestionTime.shared.ended() }
        let reader = state.withLock { state -> Reader? in
            state.phase = .waiting
            state.typed = []
            return state.reader?.reader
        }
        guard let reader else {
            state.withLock { $0.phase = .idle }
            return askDirectly(question, abandoned: abandoned, output: plainOutput)
        }
        reader.show(question + Self.prompt)
        let answer = waitForReader(abandoned: abandoned)
        reader.answered(answer == .yes)
        return answer
    }

    /// Waits for a reader's ``offer(_:)`` (or its end), at most ``answerWait``.
    private func waitForReader(abandoned: () -> Bool) -> Outcome {
        for _ in 0..<Self.waitSteps {
            _ = wakeUp.wait(timeout: .now() + .milliseconds(Self.waitStep))
            let gone = abandoned()
            let answer = state.withLock { state -> Outcome? in
                guard case .answered(let answer) = state.phase else {
                    guard gone else { return nil }
                    state.phase = .idle
                    return .abandoned
                }
                state.phase = .idle
                return answer ? .yes : .no
            }
            if let answer { return answer }
        }
        return state.withLock { state in
            defer { state.phase = .idle }
            if case .answered(let answer) = state.phase { return answer ? .yes : .no }
            return .no
        }
    }

    /// Asks on a terminal nobody else reads: the answer read in raw mode, keys typed ahead
    /// dropped, its letters echoed.
    private func askDirectly(_ question: String, abandoned: () -> Bool, output: (String) -> Void) -> Outcome {
        // The question goes to stderr: a person who cannot see it is not asked.
        guard isatty(2) == 1 else { return .notAsked("stderr is not a terminal, so nobody would see the question") }
        let terminal = Terminal.standard
        guard let saved = try? terminal.enableRawMode() else { return .notAsked("the terminal could not be put in raw mode to read the answer") }
        // An exit meanwhile (SIGTERM past its grace period) gives the terminal back too. Not
        // over a guard already armed (a terminal session before its reader runs): disarming it
        // afterwards would leave that session's restore with nothing to give back.
        let guards = crescent_terminal_is_held() == 0
        if guards { TerminalSession.armGuard(terminal, restoring: saved, writing: "") }
        defer {
            if guards { crescent_terminal_disarm() }
            terminal.restore(saved)
        }
        tcflush(terminal.input, TCIFLUSH)
        output(question + Self.prompt)
        var answer: Bool?
        var typed: [UInt8] = []
        var gone = false
        for _ in 0..<Self.waitSteps where answer == nil && !gone {
            var ready = pollfd(fd: terminal.input, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, Int32(Self.waitStep)) > 0 else {
                gone = abandoned()
                continue
            }
            guard let bytes = terminal.read(maximum: 64) else {
                answer = false  // the input ended
                break
            }
            let before = typed.count
            answer = Self.answer(to: bytes, typed: &typed)
            if answer == nil { output(String(decoding: typed[before...], as: UTF8.self)) }
        }
        let yes = answer ?? false
        output(yes ? "\n" : (typed.isEmpty ? "n\n" : " -> n\n"))
        if gone {
            output("(the one who asked went away: taken as no)\n")
            return .abandoned
        }
        return yes ? .yes : .no
    }
}
