/// The line editor as bytes in, bytes out: a ``KeyDecoder``, a ``LineEditor`` and a
/// ``PromptRenderer`` wired together, still without I/O.
///
/// The host reads the terminal and writes what the session returns; the session tells it, as
/// ``Event``s, what only the host can do: run a line, complete a word, exit. Keys that arrive after
/// a submit are kept (type-ahead) and applied once the next prompt begins; after a Tab, keys wait
/// until the host answers the completion, so a fast typist's keys apply in order.
///
/// Integration, on the host's event loop (terminal in raw mode while reading, restored while a
/// chunk runs so Ctrl-C raises SIGINT for the interrupt hook):
///
/// ```swift
/// var session = PromptSession(editor: LineEditor(history: file.load()), width: terminal.columns)
/// write(session.begin(prompt: "> ").bytes)                 // raw mode on
/// // stdin readable:
/// let output = session.receive(bytes)
/// write(output.bytes)
/// for event in output.events {
///     switch event {
///     case .submit(let line):                               // raw mode off, run, then:
///         session.editor.history.add(chunk); try? file.append(chunk)
///         write(session.begin(prompt: complete ? "> " : ".. ").bytes)
///     case .complete(let request):
///         write(session.complete(request, with: candidates, replacing: fragmentLength).bytes)
///     case .interrupt:                                      // line cleared
///         if session.editor.exitsOnNextInterrupt { write(session.printAbove("(Ctrl-C again to exit)")) }
///     case .exit, .endOfInput: quit()
///     }
/// }
/// // an Esc with nothing after it: if session.isAwaitingMoreBytes, after 50 ms:
/// write(session.flushInput().bytes)
/// // output from timers, observers, renders while the prompt is up:
/// write(session.printAbove("tick\n"))
/// // SIGWINCH:
/// write(session.resize(width: terminal.columns))
/// ```
///
/// Events carry their bytes in the same ``Output``: write `output.bytes` before acting on the
/// events (a submit's bytes move the cursor below the line, where the chunk's output belongs).
public struct PromptSession: Sendable {
    /// What the host must act on.
    public enum Event: Hashable, Sendable {
        /// Enter: run `line`. Reading stops until ``begin(prompt:)``.
        case submit(String)
        /// Tab: answer with ``complete(_:with:replacing:)`` (with no candidates to decline).
        /// Keys wait until then.
        case complete(CompletionRequest)
        /// Ctrl-C cleared the line (shown with `^C` on its row; a fresh prompt follows). When
        /// ``LineEditor/exitsOnNextInterrupt`` is true, another Ctrl-C exits.
        case interrupt
        /// Ctrl-C twice on an empty line. Reading stops.
        case exit
        /// Ctrl-D on an empty line. Reading stops.
        case endOfInput
    }

    /// Bytes to write to the terminal, and events for the host, in order.
    public struct Output: Hashable, Sendable {
        public var bytes: String
        public var events: [Event]

        public init(bytes: String = "", events: [Event] = []) {
            self.bytes = bytes
            self.events = events
        }
    }

    /// Turns bracketed paste on while reading (the terminal then marks pasted text).
    static let pasteOn = "\u{1B}[?2004h"
    /// Turns bracketed paste off (what a host's crash guard writes, should the process end while
    /// a prompt is up).
    public static let pasteOff = "\u{1B}[?2004l"

    /// The editing state: buffer, history (the host adds entries), prompts.
    public var editor: LineEditor
    /// What is on the screen.
    public private(set) var renderer: PromptRenderer
    /// Whether a prompt is up and keys are applied.
    public private(set) var isReading = false
    /// The completion the session waits for, if any.
    public private(set) var pendingCompletion: CompletionRequest?
    /// Whether to turn bracketed paste on while reading.
    public var usesBracketedPaste = true
    private var decoder = KeyDecoder()
    /// Keys decoded but not applied yet (type-ahead, or keys after a Tab).
    private var queued: [Key] = []

    /// A session for a terminal `width` columns wide.
    public init(editor: LineEditor = LineEditor(), width: Int = 80) {
        self.editor = editor
        renderer = PromptRenderer(width: width)
    }

    /// Whether an Esc (or half a sequence) waits for more bytes: call ``flushInput()`` if none come
    /// within a short timeout.
    public var isAwaitingMoreBytes: Bool { decoder.isAwaitingMoreBytes }

    /// Whether a bracketed paste has begun and its end has not come: call ``endPaste()`` if no
    /// byte comes for a while (a second), as a lost end mark must not swallow every later key.
    public var isInPaste: Bool { decoder.isInPaste }

    /// Starts reading a new line: draws the prompt (at column 0 of the current row) and applies any
    /// type-ahead.
    public mutating func begin(prompt: String? = nil) -> Output {
        editor.startLine(prompt: prompt)
        isReading = true
        pendingCompletion = nil
        var output = Output(bytes: usesBracketedPaste ? PromptSession.pasteOn : "")
        output.bytes += renderer.render(editor.view)
        process(into: &output)
        return output
    }

    /// Applies bytes read from the terminal. Bytes that arrive while not reading are kept.
    public mutating func receive(_ bytes: some Sequence<UInt8>) -> Output {
        queued += decoder.decode(bytes)
        var output = Output()
        process(into: &output)
        return output
    }

    /// Gives up waiting for the rest of an escape sequence (a lone Esc is a key).
    public mutating func flushInput() -> Output {
        queued += decoder.flush()
        var output = Output()
        process(into: &output)
        return output
    }

    /// Gives up waiting for a paste's end mark: what arrived of the paste is applied as pasted
    /// text, and keys (Ctrl-C, Ctrl-D) are read as keys again.
    public mutating func endPaste() -> Output {
        queued += decoder.endPaste()
        var output = Output()
        process(into: &output)
        return output
    }

    /// Answers the completion ``Event/complete(_:)`` asked for, then applies the keys that waited.
    public mutating func complete(_ request: CompletionRequest, with candidates: [String],
                                  replacing count: Int) -> Output {
        guard pendingCompletion == request else { return Output() }
        pendingCompletion = nil
        var output = Output()
        switch editor.complete(request, with: candidates, replacing: count) {
        case .inserted: output.bytes += renderer.render(editor.view)
        case .candidates(let list): output.bytes += renderer.printAbove(CompletionColumns.format(list, width: renderer.width))
        case .unchanged, .stale: break
        }
        process(into: &output)
        return output
    }

    /// Prints `text` above the prompt, which comes back intact below it (or just the text when no
    /// prompt is up). A newline is added when `text` does not end with one.
    public mutating func printAbove(_ text: String) -> String {
        renderer.printAbove(text)
    }

    /// ``printAbove(_:)`` for bytes that need not be UTF-8 (a program's output), written as they are.
    public mutating func printAbove(bytes: [UInt8]) -> [UInt8] {
        renderer.printAbove(bytes: bytes)
    }

    /// Redraws for a new terminal width (on SIGWINCH).
    public mutating func resize(width: Int) -> String {
        renderer.resize(width: width)
    }

    /// Redraws the prompt, after the host changed ``editor`` (its prompt or text).
    public mutating func redraw() -> String {
        isReading ? renderer.render(editor.view) : ""
    }

    /// Stops reading without a submit (the host is exiting): leaves the line on the screen and
    /// moves below it.
    public mutating func end() -> String {
        guard isReading else { return "" }
        isReading = false
        pendingCompletion = nil
        return renderer.commit() + (usesBracketedPaste ? PromptSession.pasteOff : "")
    }

    /// Applies queued keys while reading and not waiting for a completion.
    private mutating func process(into output: inout Output) {
        var needsRedraw = false
        var applied = 0
        defer { queued.removeFirst(applied) }
        while isReading, pendingCompletion == nil, applied < queued.count {
            let key = queued[applied]
            applied += 1
            let before = editor.view
            switch editor.handle(key) {
            case .none:
                break
            case .edit:
                needsRedraw = true
            case .clearScreen:
                output.bytes += renderer.clearScreen(editor.view)
                needsRedraw = false
            case .complete(let request):
                if needsRedraw { output.bytes += renderer.render(editor.view) }
                needsRedraw = false
                pendingCompletion = request
                output.events.append(.complete(request))
            case .interrupt:
                output.bytes += renderer.render(PromptSession.interrupted(before)) + renderer.commit()
                needsRedraw = true
                output.events.append(.interrupt)
            case .submit(let line):
                output.bytes += finish(editor.view)
                needsRedraw = false
                output.events.append(.submit(line))
            case .exit:
                output.bytes += finish(PromptSession.interrupted(before))
                needsRedraw = false
                output.events.append(.exit)
            case .endOfInput:
                output.bytes += finish(editor.view)
                needsRedraw = false
                output.events.append(.endOfInput)
            }
        }
        if needsRedraw { output.bytes += renderer.render(editor.view) }
    }

    /// Draws `view` a last time, moves below it and stops reading.
    private mutating func finish(_ view: PromptView) -> String {
        isReading = false
        return renderer.render(view) + renderer.commit() + (usesBracketedPaste ? PromptSession.pasteOff : "")
    }

    /// `view` with `^C` after its text, as a shell shows an abandoned line.
    private static func interrupted(_ view: PromptView) -> PromptView {
        var view = view
        view.characters += ["^", "C"]
        view.cursor = view.characters.count
        return view
    }
}
