import LineEditing

/// The `:` command line of a controller app on a terminal: the REPL's line editor (its keys,
/// history and Tab completion) drawn in the status line. Keys in, what the host should do out;
/// no I/O, so tests drive it with keys alone.
///
/// ```swift
/// var prompt = CommandPrompt(history: file?.load() ?? History())
/// switch prompt.handle(.text("a")) { ... }
/// ```
struct CommandPrompt {
    /// What a key asks of the host.
    enum Outcome: Equatable {
        /// Redraw the status line.
        case edit
        /// Nothing changed.
        case none
        /// Run this command line.
        case run(String)
        /// Complete the text before the cursor (``complete(_:with:replacing:)`` answers).
        case complete(CompletionRequest)
        /// Esc (or the line editor's interrupt and exit): leave the command line. Ctrl-D on an
        /// empty line is no way out (``Outcome/none``).
        case leave
        /// Ctrl-L.
        case redraw
        /// Text that would make the line longer than ``maxCharacters``: what fits was typed,
        /// the rest dropped.
        case cut
        /// Enter on a line that holds bytes that are not UTF-8 (``UndecodedByte``): not run,
        /// the line kept to be fixed.
        case notText(String)
    }

    /// The longest command line: a paste beyond it is cut (and said so), so a runaway paste
    /// cannot grow the line, and each redraw of it, without bound.
    static let maxCharacters = 4096

    private(set) var editor: LineEditor

    init(history: History) {
        editor = LineEditor(prompt: ":", history: history)
    }

    /// What the status line shows: `:` and the text (one line: a newline shows as a space; a
    /// byte that is not UTF-8 as `\xFF`).
    var text: String { ":" + UndecodedByte.escaped(String(editor.buffer.characters.map { $0.isNewline ? " " : $0 })) }

    /// The column of the cursor in ``text``.
    var cursorColumn: Int {
        1 + DisplayWidth.of(UndecodedByte.escaped(editor.buffer.textBeforeCursor))
    }

    /// Puts `text` in the line, the cursor after it.
    /// Sets the line to `text` on one line, its control characters dropped, as a paste is (what
    /// the line shows is what runs); false when it was cut at ``maxCharacters``.
    @discardableResult
    mutating func type(_ text: String) -> Bool {
        let line = Self.oneLine(text)
        editor.setText(String(line.prefix(Self.maxCharacters)))
        return line.count <= Self.maxCharacters
    }

    mutating func handle(_ key: Key) -> Outcome {
        if case .key(.escape, _) = key { return .leave }
        if case .key(.enter, _) = key, editor.search == nil, UndecodedByte.isIn(editor.buffer.text) {
            return .notText(editor.buffer.text)
        }
        if case .text(let text) = key, editor.search == nil {
            return type(cutting: text)
        }
        if case .paste(let text) = key, editor.search == nil {
            return type(cutting: Self.oneLine(text))
        }
        switch editor.handle(key) {
        case .none: return .none
        case .edit:
            // A history entry recalled whole (a history file is anyone's text) is cut too.
            guard editor.buffer.characters.count > Self.maxCharacters else { return .edit }
            editor.setText(String(editor.buffer.characters.prefix(Self.maxCharacters)))
            return .cut
        case .submit(let line):
            _ = editor.history.add(line)
            editor.startLine()
            return .run(line)
        case .complete(let request): return .complete(request)
        // Ctrl-D on an empty line ends nothing here, as on a terminal's other lines: closing the
        // line would make the text typed next keys (`d` deletes), which the person meant as a command.
        case .endOfInput: return .none
        case .interrupt, .exit: return .leave
        case .clearScreen: return .redraw
        }
    }

    /// A pasted text as one line of the command line: newlines and tabs become spaces (a pasted
    /// newline must not run the command), other control characters are dropped (the status line
    /// writes the line to the terminal as it is, so a pasted Esc would be a terminal sequence).
    static func oneLine(_ pasted: String) -> String {
        String(pasted.compactMap { character -> Character? in
            if character.isNewline || character == "\t" { return " " }
            return character.unicodeScalars.contains { $0.properties.generalCategory == .control } ? nil : character
        })
    }

    /// Types `text` at the cursor, as much of it as fits in ``maxCharacters``.
    private mutating func type(cutting text: String) -> Outcome {
        let room = Self.maxCharacters - editor.buffer.characters.count
        guard room > 0 || text.isEmpty else { return .cut }
        let fitting = text.prefix(room)
        let outcome = editor.handle(.text(String(fitting)))
        guard fitting.endIndex == text.endIndex else { return .cut }
        return outcome == .none ? .none : .edit
    }

    /// Answers a Tab: the candidates replace the `count` characters before the cursor; several
    /// are returned to be listed.
    mutating func complete(_ request: CompletionRequest, with candidates: [String], replacing count: Int) -> [String] {
        // A candidate that would make the line longer than it may be is not offered.
        let room = Self.maxCharacters - editor.buffer.characters.count + count
        let candidates = candidates.filter { $0.count <= room }
        switch editor.complete(request, with: candidates, replacing: count) {
        case .candidates(let list): return list
        case .inserted, .unchanged, .stale: return []
        }
    }
}

/// The command line of a terminal session: closed (keeping the history for the next time),
/// dismissed, or open.
enum CommandLineState {
    case closed(History)
    /// Closed with Esc over a controller that binds no keys, which otherwise keeps it open: it
    /// stays closed, so keys reach the controller as the status line says (`q` quits, `j`/`down`
    /// move a list's selection), until `:` opens it or a command line runs.
    case dismissed(History)
    case open(CommandPrompt)

    var isOpen: Bool {
        if case .open = self { true } else { false }
    }

    /// The history, as the command line last left it.
    var history: History {
        switch self {
        case .closed(let history), .dismissed(let history): history
        case .open(let prompt): prompt.editor.history
        }
    }
}
