/// The bytes that draw, redraw, hide and show the prompt area, from what is on the screen now.
///
/// The renderer does no I/O and keeps only what it drew last (the layout, hence where the cursor
/// is), so every method is a pure step from that state to bytes and a new state, testable without
/// a terminal. It uses only relative moves (`CR`, `CSI n A/B/C`) and erase-below (`CSI J`), so it
/// works wherever the prompt happens to be on the screen and never needs to ask the terminal where
/// the cursor is. It assumes the prompt area is the last thing on the screen, starts at column 0
/// (the host ends its output with a newline before drawing a prompt) and is shorter than the
/// terminal.
///
/// Printing asynchronous output above the prompt is ``printAbove(_:)``: hide the prompt, write the
/// text, show the prompt again, in one string to write in one `write(2)`, so the half-typed line
/// comes back intact and nothing flickers.
///
/// ```swift
/// var renderer = PromptRenderer(width: 80)
/// out(renderer.render(editor.view))            // after each edit
/// out(renderer.printAbove("tick 3\n"))          // a timer fired while the user types
/// out(renderer.commit())                        // Enter: leave the line, move below it
/// out(renderer.resize(width: 60))               // SIGWINCH
/// ```
public struct PromptRenderer: Hashable, Sendable {
    /// The terminal's width in columns.
    public private(set) var width: Int
    /// The layout on the screen now; nil when nothing is drawn (hidden, committed, not begun).
    public private(set) var shown: PromptLayout?
    /// The view drawn last, kept while hidden so ``show()`` can bring it back.
    public private(set) var lastView: PromptView?

    /// Erases from the cursor to the end of the screen.
    static let eraseBelow = "\u{1B}[J"
    /// Moves to the top-left corner and clears the screen.
    static let clear = "\u{1B}[H\u{1B}[2J"

    /// A renderer with nothing drawn, for a terminal `width` columns wide.
    public init(width: Int = 80) {
        self.width = max(width, 2)
    }

    /// Whether the prompt is on the screen.
    public var isShown: Bool { shown != nil }

    /// Draws `view` in place of what is shown (or, when nothing is, at the cursor).
    public mutating func render(_ view: PromptView) -> String {
        let bytes = erase()
        let layout = PromptLayout(view, width: width)
        shown = layout
        lastView = view
        return bytes + layout.drawing
    }

    /// Takes the prompt off the screen, leaving the cursor at column 0 of the row where it began:
    /// output written now appears where the prompt was. ``show()`` draws it again.
    public mutating func hide() -> String {
        let bytes = erase()
        shown = nil
        return bytes
    }

    /// Draws the last view again after ``hide()``; nothing when it is shown or there is none.
    public mutating func show() -> String {
        guard shown == nil, let lastView else { return "" }
        return render(lastView)
    }

    /// Hides the prompt, writes `text` (newlines become CR LF, and a newline is added when `text`
    /// does not end with one) and shows the prompt again below it. Without a prompt on the screen,
    /// just the text.
    public mutating func printAbove(_ text: String) -> String {
        // Valid UTF-8 in, valid UTF-8 out: the decoding replaces nothing.
        String(decoding: printAbove(bytes: Array(text.utf8)), as: UTF8.self)
    }

    /// ``printAbove(_:)`` for bytes that need not be UTF-8 (a program's output), written as they are.
    public mutating func printAbove(bytes text: [UInt8]) -> [UInt8] {
        guard !text.isEmpty else { return [] }
        let wasShown = isShown
        var bytes = Array(hide().utf8) + PromptRenderer.terminalLines(text)
        if wasShown { bytes += Array(show().utf8) }
        return bytes
    }

    /// Leaves what is shown on the screen and moves to column 0 of the row below it, where the
    /// output of a submitted line goes. Afterwards nothing is shown (``render(_:)`` starts a new
    /// prompt there).
    public mutating func commit() -> String {
        guard let shown else { return "" }
        self.shown = nil
        lastView = nil
        var bytes = ""
        if shown.end.row > shown.cursor.row { bytes += "\u{1B}[\(shown.end.row - shown.cursor.row)B" }
        bytes += shown.end.column == 0 ? "\r" : "\r\n"
        return bytes
    }

    /// Takes a new terminal width and redraws.
    ///
    /// Terminals that reflow soft-wrapped lines on resize (VTE, Konsole, kitty, iTerm2, Windows
    /// Terminal, tmux) move the prompt's rows with the text, so the rows above the cursor are
    /// counted at the new width. On a terminal that does not reflow (xterm), a prompt that
    /// wrapped may leave a stale row above it.
    public mutating func resize(width newWidth: Int) -> String {
        let newWidth = max(newWidth, 2)
        guard newWidth != width else { return "" }
        width = newWidth
        guard shown != nil, let lastView else { return "" }
        let reflowed = PromptLayout(lastView, width: newWidth)
        shown = nil
        var bytes = reflowed.cursor.row > 0 ? "\u{1B}[\(reflowed.cursor.row)A" : ""
        bytes += "\r" + PromptRenderer.eraseBelow
        return bytes + render(lastView)
    }

    /// Clears the screen and draws `view` (or the last view) at the top (Ctrl-L).
    public mutating func clearScreen(_ view: PromptView? = nil) -> String {
        shown = nil
        guard let view = view ?? lastView else { return PromptRenderer.clear }
        return PromptRenderer.clear + render(view)
    }

    /// Moves to the start of what is shown and erases it.
    private func erase() -> String {
        guard let shown else { return "" }
        let up = shown.cursor.row > 0 ? "\u{1B}[\(shown.cursor.row)A" : ""
        return up + "\r" + PromptRenderer.eraseBelow
    }

    /// `text` with LF made CR LF (raw mode may have output post-processing off), ending with one.
    static func terminalLines(_ text: String) -> String {
        String(decoding: terminalLines(Array(text.utf8)), as: UTF8.self)
    }

    /// ``terminalLines(_:)`` on bytes: a line feed is a byte of its own in UTF-8 and in any
    /// other bytes, so the rest pass as they are.
    static func terminalLines(_ text: [UInt8]) -> [UInt8] {
        let (lineFeed, carriageReturn) = (UInt8(ascii: "\n"), UInt8(ascii: "\r"))
        var result: [UInt8] = []
        result.reserveCapacity(text.count + 2)
        var previous: UInt8?
        for byte in text {
            if byte == lineFeed && previous != carriageReturn { result.append(carriageReturn) }
            result.append(byte)
            previous = byte
        }
        if previous != lineFeed { result += [carriageReturn, lineFeed] }
        return result
    }
}
