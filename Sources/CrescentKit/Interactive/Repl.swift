import LuaBridge
import NIOCore
import LineEditing
import Synchronization

/// The interactive prompt, on the host's loop: keys in, chunks run, values printed, and everything
/// the loop prints meanwhile (timers, observers, renders, errors) shown above the line being typed.
///
/// The terminal stays in raw mode for the whole session. A chunk runs as a task, so it may await a
/// service (`services.geocoder:search("Paris")` returns its result at the prompt); Ctrl-C while it
/// runs interrupts it and comes back to the prompt.
final class Repl {
    /// Where the REPL is between keys and chunks.
    enum Phase {
        /// The prompt is up.
        case reading
        /// A chunk runs or waits; keys typed meanwhile are kept for the next prompt.
        case running(LuaTask)
        /// Between a chunk and the next prompt, or after the end.
        case idle
        case finished
    }

    static let prompt = "> "
    static let continuationPrompt = ".. "

    let host: Host
    let link: ReplLink
    var session: PromptSession
    let historyFile: HistoryFile?
    var phase = Phase.idle
    /// The lines of a chunk that goes on (a syntax error at `<eof>`).
    var pendingLines: [String] = []
    /// `.editor` is on: Enter makes a new line, Ctrl-D runs the text.
    var inEditor = false
    /// Output that arrived while the prompt was up, printed above it at the end of the turn.
    private var above = ""
    /// Whether the last text written directly ended its line (the prompt starts at column 0).
    private var atLineStart = true
    private var inputFlush: Scheduled<Void>?
    /// The prelude's `inspect`, kept from before any script could replace the global.
    let inspect: LuaRef

    init(host: Host, link: ReplLink, historyFile: HistoryFile?) {
        self.host = host
        self.link = link
        // A path that is no regular file (`/dev/null`, a FIFO) is never read or replaced: one
        // warning, and the history lives in memory only.
        if let historyFile, let reason = historyFile.unusableReason {
            host.writeError("\(host.console.styled("crescent: warning:", .warning)) not using \(historyFile.path) as the history file: \(reason) (history stays in memory; CRESCENT_HISTORY= turns saving off)")
            self.historyFile = nil
        } else {
            self.historyFile = historyFile
        }
        let history = self.historyFile?.load() ?? History()
        session = PromptSession(editor: LineEditor(prompt: Repl.prompt, continuationPrompt: Repl.continuationPrompt,
                                                   history: history),
                                width: link.terminal.columns)
        inspect = host.loadedInspect()
        // A view a `.load`ed controller shows is printed whole once, then only its changed
        // lines: a ticking counter does not scroll the whole view past on every turn.
        host.presenter.printsChangesOnly = true
    }

    /// Prints the banner and shows the first prompt.
    func start(banner: String) {
        emit(banner + "\n")
        showPrompt()
    }

    // MARK: Output

    /// Text the host printed: above the prompt while it is up, else straight out.
    func emit(_ text: String) {
        guard !text.isEmpty else { return }
        if session.isReading {
            above += text
        } else {
            link.terminal.write(text)
            atLineStart = text.hasSuffix("\n")
        }
    }

    /// Shows a question the loop waits on (``TerminalQuestion``): above the prompt while one is
    /// up (the prompt stays, the answer key goes to the question), else on the current line.
    func showQuestion(_ text: String) {
        flushOutput()
        if session.isReading {
            link.terminal.write(session.printAbove(text))
        } else {
            emit(atLineStart ? text : "\n" + text)
        }
    }

    /// Shows the answer to the question ``showQuestion(_:)`` showed.
    func showAnswer(_ yes: Bool) {
        let answer = yes ? "y\n" : "n\n"
        if session.isReading {
            link.terminal.write(session.printAbove("  " + answer))
        } else {
            emit(answer)
        }
    }

    /// Prints what waited above the prompt.
    func flushOutput() {
        guard !above.isEmpty else { return }
        let text = above
        above = ""
        if session.isReading {
            link.terminal.write(session.printAbove(text))
        } else {
            emit(text)
        }
    }

    // MARK: The prompt

    /// Shows a fresh prompt (`..` while a chunk goes on) and applies keys typed ahead.
    func showPrompt() {
        guard host.isRunning else { return }
        if !atLineStart {
            link.terminal.write("\n")
            atLineStart = true
        }
        phase = .reading
        let prompt = inEditor ? "" : (pendingLines.isEmpty ? Repl.prompt : Repl.continuationPrompt)
        handle(session.begin(prompt: prompt))
        flushOutput()
    }

    /// Bytes read from the terminal.
    func receive(_ bytes: [UInt8]) {
        link.interruptPostedAt.store(0, ordering: .relaxed)
        clearStrayInterrupt()
        var bytes = bytes
        if case .running(let task) = phase, bytes.contains(3) {
            bytes.removeAll { $0 == 3 }
            interrupt(task)
        }
        handle(session.receive(bytes))
        scheduleInputFlush()
    }

    /// The end of input: leave as Ctrl-D would.
    func endOfInput() {
        quit(status: 0)
    }

    /// The terminal changed size.
    func resize() {
        link.terminal.write(session.resize(width: link.terminal.columns))
    }

    /// Writes the session's bytes, then acts on its events.
    func handle(_ output: PromptSession.Output) {
        link.terminal.write(output.bytes)
        for event in output.events {
            switch event {
            case .submit(let line):
                atLineStart = true
                phase = .idle
                submit(line)
            case .complete(let request):
                let answer = LuaCompletion(host: host).complete(request.prefix)
                handle(session.complete(request, with: answer.candidates, replacing: answer.fragmentLength))
            case .interrupt:
                let wasEmpty = pendingLines.isEmpty && !inEditor
                cancelPendingInput()
                if wasEmpty && session.editor.exitsOnNextInterrupt {
                    link.terminal.write(session.printAbove("(press Ctrl-C again or Ctrl-D, or type .exit, to leave)"))
                }
            case .exit, .endOfInput:
                atLineStart = true
                phase = .idle
                quit(status: 0)
            }
        }
    }

    /// Ctrl-C at the prompt: a chunk that went on, or the editor, is dropped.
    private func cancelPendingInput() {
        guard !pendingLines.isEmpty || inEditor else { return }
        pendingLines.removeAll()
        leaveEditor()
        session.editor.prompt = Repl.prompt
        link.terminal.write(session.redraw())
    }

    /// After an Esc with nothing after it yet, waits briefly for the rest of a key's sequence;
    /// inside a bracketed paste, waits a second without bytes for its end mark, then takes what
    /// came as the paste (a lost end mark swallowed every key, Ctrl-C and Ctrl-D included).
    private func scheduleInputFlush() {
        inputFlush?.cancel()
        inputFlush = nil
        let wait: TimeAmount
        if session.isAwaitingMoreBytes {
            wait = .milliseconds(50)
        } else if session.isInPaste {
            wait = .milliseconds(Int64(TerminalSession.pasteWait))
        } else {
            return
        }
        let bound = NIOLoopBound(self, eventLoop: host.loop)
        inputFlush = host.loop.scheduleTask(in: wait) {
            let repl = bound.value
            repl.inputFlush = nil
            if repl.session.isAwaitingMoreBytes {
                repl.host.runTurn { _ in repl.handle(repl.session.flushInput()) }
            } else if repl.session.isInPaste {
                repl.host.runTurn { _ in repl.handle(repl.session.endPaste()) }
            }
        }
    }

    /// Runs the next step on a later turn, so output is flushed and the loop breathes between
    /// chunks (and type-ahead of many lines never nests calls).
    func later(_ body: @escaping (Repl) -> Void) {
        host.enqueue { [unowned self] _ in body(self) }
    }

    // MARK: Leaving

    /// Leaves the REPL with `status` (Ctrl-D, Ctrl-C twice, `.exit`, the end of input).
    func quit(status: Int32) {
        guard host.isRunning else { return }
        link.terminal.write(session.end())
        host.finish(status: status)
    }

    /// The host finished by itself (`app.exit`, a signal): moves below the prompt.
    func hostFinished() {
        flushOutput()
        link.terminal.write(session.end())
        phase = .finished
    }
}
