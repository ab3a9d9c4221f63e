/// The line being edited: its text as grapheme clusters, a cursor between them, and the kill ring.
///
/// A pure value: every editing command of the line editor is a mutating method here, so a test (or
/// a host) can drive it without a terminal. Indices count `Character`s, so a CJK ideograph, an emoji
/// ZWJ sequence or a letter with combining marks moves and erases as one. Text is re-segmented
/// around each change, so a combining mark or the second half of an emoji sequence typed on its
/// own joins the character before it. The text may hold newlines (a multi-line entry from history
/// or a paste): line-wise commands (Ctrl-A/E/K/U, up/down) act on the line the cursor is on.
/// Carriage returns are stored as newlines.
///
/// Mutating methods return whether anything changed, so the caller knows whether to redraw.
///
/// ```swift
/// var line = LineBuffer("print(x)")
/// line.moveLeft()                 // cursor before ")"
/// line.insert(", 語")
/// line.text                       // "print(x, 語)"
/// line.killToLineStart()          // Ctrl-U: "print(x, 語" goes to the kill ring
/// line.moveToLineEnd()
/// line.yank()                     // Ctrl-Y: ")print(x, 語"
/// line.columnsBeforeCursor        // 12: the ideograph takes two columns
/// ```
public struct LineBuffer: Hashable, Sendable {
    /// The text, one grapheme cluster per element.
    public private(set) var characters: [Character]
    /// The insertion point: an index into ``characters``, from 0 to `characters.count`.
    public private(set) var cursor: Int
    /// Killed text for yank; carried from one line to the next by ``LineEditor``.
    public var killRing: KillRing
    /// What the last command was, for kills that merge and for yank-pop.
    var lastEdit = LastEdit.other

    enum LastEdit: Hashable, Sendable {
        case other
        case kill
        /// A yank that inserted the characters in this range.
        case yank(Range<Int>)
    }

    /// A buffer holding `text` with the cursor at `cursor` (clamped), or at the end.
    public init(_ text: String = "", cursor: Int? = nil, killRing: KillRing = KillRing()) {
        characters = Array(LineBuffer.normalized(text))
        self.cursor = min(max(cursor ?? characters.count, 0), characters.count)
        self.killRing = killRing
    }

    /// The whole text.
    public var text: String { String(characters) }
    /// Whether the buffer holds no text.
    public var isEmpty: Bool { characters.isEmpty }
    /// The text before the cursor: what tab completion looks at.
    public var textBeforeCursor: String { String(characters[..<cursor]) }
    /// The text from the cursor on.
    public var textAfterCursor: String { String(characters[cursor...]) }

    /// The columns between the start of the cursor's line and the cursor (wide characters count
    /// two, combining marks none): where a renderer puts the cursor, before any prompt and wrapping.
    public var columnsBeforeCursor: Int {
        ColumnWidth.of(characters[lineStart(of: cursor)..<cursor])
    }

    /// Replaces the whole text (history recall, search accept) and puts the cursor at `cursor`,
    /// or at the end. The kill ring is kept.
    public mutating func setText(_ text: String, cursor: Int? = nil) {
        characters = Array(LineBuffer.normalized(text))
        self.cursor = min(max(cursor ?? characters.count, 0), characters.count)
        lastEdit = .other
    }

    /// Inserts `text` at the cursor and moves the cursor after it.
    @discardableResult
    public mutating func insert(_ text: String) -> Bool {
        lastEdit = .other
        guard !text.isEmpty else { return false }
        replace(cursor..<cursor, with: text)
        return true
    }

    /// Erases the character before the cursor (Backspace).
    @discardableResult
    public mutating func deleteBackward() -> Bool {
        lastEdit = .other
        guard cursor > 0 else { return false }
        replace(cursor - 1..<cursor, with: "")
        return true
    }

    /// Erases the character under the cursor (Delete, Ctrl-D on a non-empty line).
    @discardableResult
    public mutating func deleteForward() -> Bool {
        lastEdit = .other
        guard cursor < characters.count else { return false }
        replace(cursor..<cursor + 1, with: "")
        return true
    }

    /// Moves the cursor one character left (Left, Ctrl-B).
    @discardableResult
    public mutating func moveLeft() -> Bool {
        moveCursor(to: cursor - 1)
    }

    /// Moves the cursor one character right (Right, Ctrl-F).
    @discardableResult
    public mutating func moveRight() -> Bool {
        moveCursor(to: cursor + 1)
    }

    /// Moves the cursor to `index`, clamped to the text.
    @discardableResult
    public mutating func moveCursor(to index: Int) -> Bool {
        lastEdit = .other
        let target = min(max(index, 0), characters.count)
        guard target != cursor else { return false }
        cursor = target
        return true
    }

    /// Replaces the `count` characters before the cursor with `text` (tab completion), leaving
    /// the cursor after it.
    @discardableResult
    public mutating func replaceBeforeCursor(_ count: Int, with text: String) -> Bool {
        lastEdit = .other
        let start = max(cursor - max(count, 0), 0)
        guard String(characters[start..<cursor]) != text else { return false }
        replace(start..<cursor, with: text)
        return true
    }

    // MARK: - Building blocks for the editing commands

    /// Replaces the characters in `range` with `text`, re-segments the seam, and puts the cursor
    /// after the new text. Returns the range the new text occupies.
    ///
    /// Grapheme breaks depend on neighbours (a combining mark, a ZWJ, a second regional
    /// indicator join the character before), so one character of context on each side is
    /// segmented again together with the new text.
    @discardableResult
    mutating func replace(_ range: Range<Int>, with text: String) -> Range<Int> {
        let lower = max(range.lowerBound - 1, 0)
        let upper = min(range.upperBound + 1, characters.count)
        let before = String(characters[lower..<range.lowerBound])
        let after = String(characters[range.upperBound..<upper])
        let head = before + LineBuffer.normalized(text)
        let merged = Array(head + after)
        characters.replaceSubrange(lower..<upper, with: merged)
        let end = lower + min(head.count, merged.count)
        cursor = end
        return min(lower + before.count, end)..<end
    }

    /// The index where the line holding `index` starts (just after the previous newline).
    func lineStart(of index: Int) -> Int {
        var start = index
        while start > 0 && characters[start - 1] != "\n" { start -= 1 }
        return start
    }

    /// The index where the line holding `index` ends (its newline, or the end of the text).
    func lineEnd(of index: Int) -> Int {
        var end = index
        while end < characters.count && characters[end] != "\n" { end += 1 }
        return end
    }

    /// `text` with carriage returns (`\r\n`, `\r`) turned into newlines.
    static func normalized(_ text: String) -> String {
        guard text.contains(where: { $0 == "\r" || $0 == "\r\n" }) else { return text }
        return String(text.map { $0 == "\r" || $0 == "\r\n" ? "\n" : $0 })
    }
}
