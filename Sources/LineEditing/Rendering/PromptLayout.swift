/// Where a ``PromptView`` lands on a terminal `width` columns wide, and the bytes that draw it.
///
/// The layout starts at column 0 of the prompt's first row. Text wraps the way terminals wrap it
/// (xterm's autowrap): a row is filled to the last column, and a wide character that does not fit
/// in the last column goes to the next row, the column left blank. Newlines in the text (and in a
/// prompt) are hard line breaks; each line of the text after the first starts with the
/// continuation prompt. Escape sequences in prompts take no columns.
///
/// ```swift
/// let layout = PromptLayout(PromptView(prompt: "> ", text: "abcdefgh", cursor: 3), width: 6)
/// layout.rowCount     // 2: "> abcd" then "efgh"
/// layout.cursor       // Position(row: 0, column: 5), on "d"
/// layout.drawing      // "> abcdefgh\u{1B}[1A\r\u{1B}[5C": draw, then back up to the cursor
/// ```
public struct PromptLayout: Hashable, Sendable {
    /// A place on the screen, relative to column 0 of the prompt's first row.
    public struct Position: Hashable, Sendable {
        public var row: Int
        public var column: Int

        public init(row: Int, column: Int) {
            self.row = row
            self.column = column
        }
    }

    /// The bytes that draw the view, starting at column 0 of the first row; the terminal cursor
    /// is then at ``end``.
    public let text: String
    /// Where writing ``text`` leaves the terminal cursor. A column equal to the width means the
    /// terminal is holding a wrap at the end of a full row.
    public let end: Position
    /// Where the cursor is shown.
    public let cursor: Position
    /// The columns laid out in.
    public let width: Int

    /// The number of rows the view takes.
    public var rowCount: Int { end.row + 1 }

    /// ``text`` followed by the moves from ``end`` back up to ``cursor``: the whole drawing,
    /// for a prompt drawn from column 0 of an empty row.
    public var drawing: String { text + PromptLayout.move(from: end, to: cursor) }

    /// Lays `view` out for a terminal `width` columns wide (at least 2).
    public init(_ view: PromptView, width: Int) {
        var writer = Writer(width: max(width, 2))
        writer.prompt(view.prompt)
        var cursor: Position?
        for (index, character) in view.characters.enumerated() {
            if index == view.cursor { cursor = writer.cursorBefore(character) }
            if character == "\n" {
                writer.lineBreak()
                writer.prompt(view.continuationPrompt)
            } else {
                writer.place(ColumnWidth.glyph(for: character), columns: ColumnWidth.of(character))
            }
        }
        if cursor == nil {
            // At the end of the text: a full last row moves the cursor to the start of the next.
            if writer.column >= writer.width { writer.lineBreak() }
            cursor = Position(row: writer.row, column: writer.column)
        }
        self.text = writer.output
        self.end = Position(row: writer.row, column: writer.column)
        self.cursor = cursor ?? end
        self.width = writer.width
    }

    /// Relative moves between two positions of the layout (up or down, then to the column).
    public static func move(from start: Position, to target: Position) -> String {
        guard start != target else { return "" }
        var moves = ""
        if start.row > target.row { moves += "\u{1B}[\(start.row - target.row)A" }
        if start.row < target.row { moves += "\u{1B}[\(target.row - start.row)B" }
        moves += "\r"
        if target.column > 0 { moves += "\u{1B}[\(target.column)C" }
        return moves
    }

    /// Writes glyphs and follows the terminal's cursor as it does.
    private struct Writer {
        let width: Int
        var output = ""
        var row = 0
        var column = 0

        init(width: Int) {
            self.width = width
        }

        /// Writes a glyph `columns` wide, wrapping as the terminal will.
        mutating func place(_ glyph: String, columns: Int) {
            if columns > 0 && column + columns > width {
                if column < width { output += String(repeating: " ", count: width - column) }
                row += 1
                column = 0
            }
            output += glyph
            column += columns
        }

        mutating func lineBreak() {
            output += "\r\n"
            row += 1
            column = 0
        }

        /// Where the cursor shows when it sits just before `character`.
        func cursorBefore(_ character: Character) -> Position {
            let columns = ColumnWidth.of(character)
            if character != "\n" && columns > 0 && column + columns > width {
                return Position(row: row + 1, column: 0)
            }
            return Position(row: row, column: min(column, width - 1))
        }

        /// Writes a prompt: escape sequences as they are (no columns), newlines as line breaks.
        mutating func prompt(_ prompt: String) {
            var scalars = prompt.unicodeScalars[...]
            var plain = String.UnicodeScalarView()
            func flushPlain() {
                for character in String(plain) {
                    if character == "\n" {
                        lineBreak()
                    } else {
                        place(ColumnWidth.glyph(for: character), columns: ColumnWidth.of(character))
                    }
                }
                plain = String.UnicodeScalarView()
            }
            while let scalar = scalars.first {
                guard scalar == "\u{1B}" else {
                    plain.append(scalar)
                    scalars = scalars.dropFirst()
                    continue
                }
                flushPlain()
                let sequence = PromptLayout.escapeSequence(at: scalars)
                output.unicodeScalars.append(contentsOf: sequence)
                scalars = scalars.dropFirst(sequence.count)
            }
            flushPlain()
        }
    }

    /// The escape sequence at the start of `scalars`: CSI (`ESC [ … final`), OSC (`ESC ] … BEL`
    /// or `ESC ] … ESC \`), or ESC and one more character.
    static func escapeSequence(at scalars: Substring.UnicodeScalarView) -> Substring.UnicodeScalarView {
        var index = scalars.index(after: scalars.startIndex)
        guard index < scalars.endIndex else { return scalars }
        let kind = scalars[index]
        index = scalars.index(after: index)
        switch kind {
        case "[":
            while index < scalars.endIndex {
                let value = scalars[index].value
                index = scalars.index(after: index)
                if (0x40...0x7E).contains(value) { break }
            }
        case "]":
            while index < scalars.endIndex {
                let scalar = scalars[index]
                index = scalars.index(after: index)
                if scalar == "\u{07}" { break }
                if scalar == "\u{1B}", index < scalars.endIndex, scalars[index] == "\\" {
                    index = scalars.index(after: index)
                    break
                }
            }
        default:
            break
        }
        return scalars[scalars.startIndex..<index]
    }
}
