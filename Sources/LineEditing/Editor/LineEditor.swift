/// The line editor's state machine: key events in, edits and requests for the host out.
///
/// It owns the ``LineBuffer`` being edited, the ``History`` (browsed with Up/Down, searched with
/// Ctrl-R) and the kill ring, and maps keys to commands as Emacs-mode readline does:
///
/// | keys | command |
/// |---|---|
/// | Left/Right, Ctrl-B/F | move a character |
/// | Alt-B/F, Ctrl-Left/Right, Alt-Left/Right | move a word |
/// | Home/End, Ctrl-A/E | start/end of the line (Ctrl-Home/End: of the whole text) |
/// | Backspace (Ctrl-H), Delete | erase a character |
/// | Ctrl-K, Ctrl-U | kill to the end / the start of the line |
/// | Ctrl-W, Alt-Backspace, Alt-D | kill a blank-delimited word back, a word back, a word forward |
/// | Ctrl-Y, Alt-Y | yank, then rotate the kill ring |
/// | Ctrl-T | transpose characters |
/// | Up/Down, Ctrl-P/N | previous/next history entry (inside a multi-line text: line up/down) |
/// | Ctrl-R | reverse incremental search (Ctrl-R again: older, Ctrl-G: cancel, Enter: run it) |
/// | Tab | completion (``Action/complete(_:)``); on a blank line, indents |
/// | Alt-Enter | a newline in the text |
/// | Enter | ``Action/submit(_:)`` |
/// | Ctrl-C | clears the line (``Action/interrupt``); again on the empty line: ``Action/exit`` |
/// | Ctrl-D | erase forward; on an empty line ``Action/endOfInput`` |
/// | Ctrl-L | ``Action/clearScreen`` |
///
/// The editor does no I/O. ``PromptSession`` wraps it with a ``KeyDecoder`` and a
/// ``PromptRenderer`` into bytes-in, bytes-out; a host that wants its own plumbing uses it
/// directly:
///
/// ```swift
/// var editor = LineEditor(prompt: "> ", history: HistoryFile.standard()?.load() ?? History())
/// for key in decoder.decode(bytesRead) {
///     switch editor.handle(key) {
///     case .none: break
///     case .edit: output += renderer.render(editor.view, width: columns)
///     case .submit(let line): run(line); editor.history.add(line); editor.startLine()
///     case .complete(let request): answer(editor.complete(request, with: candidates, replacing: n))
///     case .interrupt, .exit, .endOfInput, .clearScreen: ...
///     }
/// }
/// ```
///
/// Submitting does not record the line in ``history``: the host adds the whole chunk once it is
/// complete (a multi-line chunk becomes one entry) and starts the next line with ``startLine(prompt:)``.
public struct LineEditor: Sendable {
    /// What a key asks of the host.
    public enum Action: Hashable, Sendable {
        /// Nothing visible changed.
        case none
        /// The line or the cursor changed: redraw.
        case edit
        /// Enter: the line is done. The editor keeps showing it until ``startLine(prompt:)``.
        case submit(String)
        /// Ctrl-C: the line was cleared (``exitsOnNextInterrupt`` tells whether another Ctrl-C
        /// now exits).
        case interrupt
        /// Ctrl-C on an empty line right after a Ctrl-C on an empty line.
        case exit
        /// Ctrl-D on an empty line.
        case endOfInput
        /// Tab: complete the word before the cursor, then call ``complete(_:with:replacing:)``.
        case complete(CompletionRequest)
        /// Ctrl-L: clear the screen and redraw.
        case clearScreen
    }

    /// Shown before the first line.
    public var prompt: String
    /// Shown before the further lines of a multi-line text.
    public var continuationPrompt: String
    /// The line being edited.
    public internal(set) var buffer: LineBuffer
    /// The entries Up/Down and Ctrl-R go through.
    public var history: History
    /// The reverse search under way, if any.
    public internal(set) var search: HistorySearch?
    /// The buffer as it was when the search began (Ctrl-G gives it back).
    var searchOrigin = LineBuffer()
    /// The last search's query, reused by Ctrl-R Ctrl-R.
    var lastSearchQuery = ""
    /// Editor mode (the REPL's `.editor`): Enter inserts a newline and Ctrl-D submits the whole
    /// text, even an empty one.
    public var submitsOnControlD = false
    /// Whether the last key was a Ctrl-C on an empty line, so the next one exits.
    public private(set) var exitsOnNextInterrupt = false

    /// What a blank line's Tab inserts.
    public static let indentation = "  "

    /// An editor with an empty line.
    public init(prompt: String = "> ", continuationPrompt: String = ".. ", history: History = History()) {
        self.prompt = prompt
        self.continuationPrompt = continuationPrompt
        self.history = history
        buffer = LineBuffer()
    }

    /// Starts a new, empty line (keeping the kill ring and the history), optionally with a new
    /// prompt: after a submit, `".. "` for a chunk that goes on.
    public mutating func startLine(prompt: String? = nil) {
        if let prompt { self.prompt = prompt }
        buffer = LineBuffer(killRing: buffer.killRing)
        search = nil
        history.endBrowsing()
    }

    /// Replaces the text being edited (the cursor goes to the end): for a host that pre-fills a line.
    public mutating func setText(_ text: String) {
        buffer.setText(text)
    }

    /// What to draw now.
    public var view: PromptView {
        if let search {
            guard let match = search.match, history.entries.indices.contains(match.entry) else {
                return PromptView(prompt: search.prompt, continuationPrompt: continuationPrompt,
                                  characters: searchOrigin.characters, cursor: searchOrigin.cursor)
            }
            return PromptView(prompt: search.prompt, continuationPrompt: continuationPrompt,
                              text: history.entries[match.entry], cursor: match.offset)
        }
        return PromptView(prompt: prompt, continuationPrompt: continuationPrompt,
                          characters: buffer.characters, cursor: buffer.cursor)
    }

    /// Applies one key and says what the host should do.
    public mutating func handle(_ key: Key) -> Action {
        let interruptArmed = exitsOnNextInterrupt
        exitsOnNextInterrupt = false
        if search != nil, let action = handleSearch(key) { return action }
        switch key {
        case .text(let text), .paste(let text):
            return edit(buffer.insert(text))
        case .control(let letter):
            return handleControl(letter, interruptArmed: interruptArmed)
        case .alt(let character):
            return handleAlt(character)
        case .key(let name, let modifiers):
            return handleNamed(name, modifiers)
        case .mouse:
            return .none
        }
    }

    /// Answers a ``Action/complete(_:)`` request with the host's candidates.
    ///
    /// - Parameters:
    ///   - request: the request the candidates are for; a stale one changes nothing.
    ///   - candidates: full replacements for the fragment, in the order to show them.
    ///   - count: how many characters before the cursor (the fragment) the candidates replace.
    /// - Returns: whether text was inserted, or the candidates to list.
    public mutating func complete(_ request: CompletionRequest, with candidates: [String],
                                  replacing count: Int) -> CompletionOutcome {
        guard search == nil, request.cursor == buffer.cursor, request.line == buffer.text else { return .stale }
        var seen = Set<String>()
        let unique = candidates.filter { seen.insert($0).inserted }
        guard let first = unique.first else { return .unchanged }
        let fragmentLength = min(max(count, 0), buffer.cursor)
        if unique.count == 1 {
            return buffer.replaceBeforeCursor(fragmentLength, with: first) ? .inserted : .unchanged
        }
        let common = unique.dropFirst().reduce(Array(first)) { prefix, candidate in
            Array(zip(prefix, candidate).prefix { $0 == $1 }.map(\.0))
        }
        let fragment = buffer.characters[(buffer.cursor - fragmentLength)..<buffer.cursor]
        if common.count > fragmentLength, common.starts(with: fragment) {
            buffer.replaceBeforeCursor(fragmentLength, with: String(common))
            return .inserted
        }
        return .candidates(unique)
    }

    // MARK: - Key dispatch

    private mutating func handleControl(_ letter: Character, interruptArmed: Bool) -> Action {
        switch letter {
        case "a": return edit(buffer.moveToLineStart())
        case "e": return edit(buffer.moveToLineEnd())
        case "b": return edit(buffer.moveLeft())
        case "f": return edit(buffer.moveRight())
        case "p": return previousLine()
        case "n": return nextLine()
        case "k": return edit(buffer.killToLineEnd())
        case "u": return edit(buffer.killToLineStart())
        case "w": return edit(buffer.killWordBackward())
        case "y": return edit(buffer.yank())
        case "t": return edit(buffer.transpose())
        case "l": return .clearScreen
        case "r": return startSearch()
        case "d":
            if submitsOnControlD {
                history.endBrowsing()
                return .submit(buffer.text)
            }
            return buffer.isEmpty ? .endOfInput : edit(buffer.deleteForward())
        case "c":
            let wasEmpty = buffer.isEmpty
            if wasEmpty && interruptArmed { return .exit }
            buffer.setText("")
            history.endBrowsing()
            exitsOnNextInterrupt = wasEmpty
            return .interrupt
        default: return .none
        }
    }

    private mutating func handleAlt(_ character: Character) -> Action {
        switch character {
        case "b": return edit(buffer.moveWordLeft())
        case "f": return edit(buffer.moveWordRight())
        case "d": return edit(buffer.killWordForward())
        case "y": return edit(buffer.yankPop())
        default: return .none
        }
    }

    private mutating func handleNamed(_ name: Key.Name, _ modifiers: Key.Modifiers) -> Action {
        let byWord = !modifiers.isDisjoint(with: [.control, .alt])
        switch name {
        case .enter where modifiers.contains(.alt) || submitsOnControlD:
            return edit(buffer.insert("\n"))
        case .enter:
            history.endBrowsing()
            return .submit(buffer.text)
        case .tab where modifiers.isEmpty:
            let line = buffer.characters[buffer.lineStart(of: buffer.cursor)..<buffer.cursor]
            if line.allSatisfy(\.isWhitespace) { return edit(buffer.insert(LineEditor.indentation)) }
            return .complete(CompletionRequest(line: buffer.text, prefix: buffer.textBeforeCursor, cursor: buffer.cursor))
        case .backspace:
            return edit(modifiers.contains(.alt) ? buffer.killAlphanumericWordBackward() : buffer.deleteBackward())
        case .delete:
            return edit(byWord ? buffer.killWordForward() : buffer.deleteForward())
        case .left: return edit(byWord ? buffer.moveWordLeft() : buffer.moveLeft())
        case .right: return edit(byWord ? buffer.moveWordRight() : buffer.moveRight())
        case .home: return edit(modifiers.contains(.control) ? buffer.moveToStart() : buffer.moveToLineStart())
        case .end: return edit(modifiers.contains(.control) ? buffer.moveToEnd() : buffer.moveToLineEnd())
        case .up: return previousLine()
        case .down: return nextLine()
        case .tab, .backTab, .insert, .escape, .pageUp, .pageDown, .function: return .none
        }
    }

    /// Up: the line above in a multi-line text, else the previous history entry with the cursor
    /// at the end of its first line (so another Up goes on to the entry before).
    private mutating func previousLine() -> Action {
        if buffer.moveLineUp() { return .edit }
        guard let text = history.previous(current: buffer.text) else { return .none }
        let firstLine = text.prefix { $0 != "\n" }.count
        buffer.setText(text, cursor: firstLine)
        return .edit
    }

    /// Down: the line below in a multi-line text, else the next history entry (or the draft)
    /// with the cursor at its end.
    private mutating func nextLine() -> Action {
        if buffer.moveLineDown() { return .edit }
        guard let text = history.next(current: buffer.text) else { return .none }
        buffer.setText(text)
        return .edit
    }

    private func edit(_ changed: Bool) -> Action {
        changed ? .edit : .none
    }
}
