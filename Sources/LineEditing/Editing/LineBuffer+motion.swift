/// Cursor motions by word and by line.
///
/// A word is a run of letters, digits and `_` (Lua identifiers, and CJK text, which has no spaces,
/// counts as one run), as readline's `forward-word`/`backward-word` use alphanumerics.
///
/// ```swift
/// var line = LineBuffer("local answer = 42")
/// line.moveWordLeft()         // before "42"
/// line.moveWordLeft()         // before "answer"
/// line.moveWordRight()        // after "answer"
/// ```
extension LineBuffer {
    /// Whether `character` belongs to a word for word motions and Alt-D / Alt-Backspace.
    public static func isWordCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_"
    }

    /// Moves to the start of the word before the cursor (Alt-B, Ctrl-Left).
    @discardableResult
    public mutating func moveWordLeft() -> Bool {
        moveCursor(to: wordStart(before: cursor))
    }

    /// Moves to the end of the word after the cursor (Alt-F, Ctrl-Right).
    @discardableResult
    public mutating func moveWordRight() -> Bool {
        moveCursor(to: wordEnd(after: cursor))
    }

    /// Moves to the start of the cursor's line (Home, Ctrl-A).
    @discardableResult
    public mutating func moveToLineStart() -> Bool {
        moveCursor(to: lineStart(of: cursor))
    }

    /// Moves to the end of the cursor's line (End, Ctrl-E).
    @discardableResult
    public mutating func moveToLineEnd() -> Bool {
        moveCursor(to: lineEnd(of: cursor))
    }

    /// Moves to the start of the whole text (Ctrl-Home).
    @discardableResult
    public mutating func moveToStart() -> Bool {
        moveCursor(to: 0)
    }

    /// Moves to the end of the whole text (Ctrl-End).
    @discardableResult
    public mutating func moveToEnd() -> Bool {
        moveCursor(to: characters.count)
    }

    /// In a multi-line text, moves to the line above, keeping the column as well as it can.
    /// Returns false on the first line (where Up recalls history instead).
    @discardableResult
    public mutating func moveLineUp() -> Bool {
        let start = lineStart(of: cursor)
        guard start > 0 else { return false }
        let column = ColumnWidth.of(characters[start..<cursor])
        return moveCursor(to: index(atColumn: column, inLineStartingAt: lineStart(of: start - 1)))
    }

    /// In a multi-line text, moves to the line below, keeping the column as well as it can.
    /// Returns false on the last line (where Down recalls history instead).
    @discardableResult
    public mutating func moveLineDown() -> Bool {
        let end = lineEnd(of: cursor)
        guard end < characters.count else { return false }
        let column = ColumnWidth.of(characters[lineStart(of: cursor)..<cursor])
        return moveCursor(to: index(atColumn: column, inLineStartingAt: end + 1))
    }

    /// Whether the cursor is on the first line of the text.
    public var isOnFirstLine: Bool { lineStart(of: cursor) == 0 }
    /// Whether the cursor is on the last line of the text.
    public var isOnLastLine: Bool { lineEnd(of: cursor) == characters.count }

    // MARK: - Word and column arithmetic

    /// Where the word before `index` starts: skip non-word characters back, then word characters.
    func wordStart(before index: Int) -> Int {
        var position = index
        while position > 0 && !LineBuffer.isWordCharacter(characters[position - 1]) { position -= 1 }
        while position > 0 && LineBuffer.isWordCharacter(characters[position - 1]) { position -= 1 }
        return position
    }

    /// Where the word after `index` ends: skip non-word characters, then word characters.
    func wordEnd(after index: Int) -> Int {
        var position = index
        while position < characters.count && !LineBuffer.isWordCharacter(characters[position]) { position += 1 }
        while position < characters.count && LineBuffer.isWordCharacter(characters[position]) { position += 1 }
        return position
    }

    /// Where a whitespace-delimited word before `index` starts (Ctrl-W, readline's
    /// `unix-word-rubout`): skip whitespace back, then everything else.
    func bigWordStart(before index: Int) -> Int {
        var position = index
        while position > 0 && characters[position - 1].isWhitespace { position -= 1 }
        while position > 0 && !characters[position - 1].isWhitespace { position -= 1 }
        return position
    }

    /// The index in the line starting at `start` whose column is the largest not past `column`.
    private func index(atColumn column: Int, inLineStartingAt start: Int) -> Int {
        let end = lineEnd(of: start)
        var position = start
        var used = 0
        while position < end {
            let next = used + ColumnWidth.of(characters[position])
            if next > column { break }
            used = next
            position += 1
        }
        return position
    }
}
