import LineEditing
import Testing

/// Where text lands and the exact bytes that draw it.
@Suite struct PromptLayoutTests {
    typealias Position = PromptLayout.Position

    @Test func aShortLine() {
        let layout = PromptLayout(PromptView(prompt: "> ", text: "print(1)"), width: 80)
        #expect(layout.text == "> print(1)")
        #expect(layout.cursor == Position(row: 0, column: 10))
        #expect(layout.drawing == "> print(1)")
        #expect(layout.rowCount == 1)
        let middle = PromptLayout(PromptView(prompt: "> ", text: "print(1)", cursor: 3), width: 80)
        #expect(middle.drawing == "> print(1)\r\u{1B}[5C")
    }

    @Test func aLongLineWraps() {
        let layout = PromptLayout(PromptView(prompt: "> ", text: "abcdefgh", cursor: 3), width: 6)
        #expect(layout.rowCount == 2)
        #expect(layout.end == Position(row: 1, column: 4))
        #expect(layout.cursor == Position(row: 0, column: 5))
        #expect(layout.drawing == "> abcdefgh\u{1B}[1A\r\u{1B}[5C")
        let third = PromptLayout(PromptView(prompt: "> ", text: "abcdefghijklmn", cursor: 5), width: 6)
        #expect(third.rowCount == 3)
        #expect(third.cursor == Position(row: 1, column: 1))
        #expect(third.drawing == "> abcdefghijklmn\u{1B}[1A\r\u{1B}[1C")
    }

    @Test func aFullRowPutsTheCursorAtTheStartOfTheNext() {
        let atEnd = PromptLayout(PromptView(prompt: "> ", text: "abcd"), width: 6)
        #expect(atEnd.text == "> abcd\r\n", "the terminal holds the wrap; a line break makes it real")
        #expect(atEnd.cursor == Position(row: 1, column: 0))
        #expect(atEnd.rowCount == 2)
        let before = PromptLayout(PromptView(prompt: "> ", text: "abcd", cursor: 0), width: 6)
        #expect(before.text == "> abcd")
        #expect(before.end == Position(row: 0, column: 6), "the pending wrap")
        #expect(before.drawing == "> abcd\r\u{1B}[2C")
    }

    @Test func aWideCharacterThatDoesNotFitGoesToTheNextRow() {
        let layout = PromptLayout(PromptView(prompt: "> ", text: "abc語x"), width: 6)
        #expect(layout.text == "> abc 語x", "the last column is left blank, as terminals do")
        #expect(layout.end == Position(row: 1, column: 3))
        let onIt = PromptLayout(PromptView(prompt: "> ", text: "abc語x", cursor: 3), width: 6)
        #expect(onIt.cursor == Position(row: 1, column: 0))
        let emoji = PromptLayout(PromptView(prompt: "", text: "👩‍👩‍👧👩‍👩‍👧👩‍👩‍👧"), width: 5)
        #expect(emoji.text == "👩‍👩‍👧👩‍👩‍👧 👩‍👩‍👧")
        #expect(emoji.cursor == Position(row: 1, column: 2))
    }

    @Test func newlinesStartContinuationLines() {
        let view = PromptView(prompt: "> ", continuationPrompt: ".. ", text: "if x then\n  y()\nend", cursor: 12)
        let layout = PromptLayout(view, width: 80)
        #expect(layout.text == "> if x then\r\n..   y()\r\n.. end")
        #expect(layout.rowCount == 3)
        #expect(layout.cursor == Position(row: 1, column: 5))
        #expect(layout.drawing == layout.text + "\u{1B}[1A\r\u{1B}[5C")
        let emptyLast = PromptLayout(PromptView(prompt: "> ", continuationPrompt: ".. ", text: "x\n"), width: 80)
        #expect(emptyLast.cursor == Position(row: 1, column: 3))
    }

    @Test func carriageReturnsInAViewAreLineBreaks() {
        let view = PromptView(prompt: "> ", continuationPrompt: ".. ", text: "a\r\nb\rc")
        #expect(view.text == "a\nb\nc")
        #expect(PromptLayout(view, width: 80).text == "> a\r\n.. b\r\n.. c")
    }

    @Test func escapeSequencesInPromptsTakeNoColumns() {
        let color = "\u{1B}[1;32mlua\u{1B}[0m> "
        let layout = PromptLayout(PromptView(prompt: color, text: "x", cursor: 0), width: 80)
        #expect(layout.text == color + "x")
        #expect(layout.cursor == Position(row: 0, column: 5))
        let title = "\u{1B}]0;crescent\u{7}> "
        #expect(PromptLayout(PromptView(prompt: title, text: ""), width: 80).cursor == Position(row: 0, column: 2))
        let multiLine = PromptLayout(PromptView(prompt: "[main]\n> ", text: "x"), width: 80)
        #expect(multiLine.text == "[main]\r\n> x")
        #expect(multiLine.cursor == Position(row: 1, column: 3))
    }

    @Test func controlCharactersAndTabsAreDrawnVisibly() {
        let layout = PromptLayout(PromptView(prompt: "", text: "a\tb\u{1}c"), width: 80)
        #expect(layout.text == "a    b^Ac")
        #expect(layout.cursor == Position(row: 0, column: 9))
    }

    @Test func combiningMarksTakeNoColumn() {
        let layout = PromptLayout(PromptView(prompt: "> ", text: "cafe\u{301}!", cursor: 4), width: 80)
        #expect(layout.cursor == Position(row: 0, column: 6))
    }

    @Test func movesBetweenPositions() {
        #expect(PromptLayout.move(from: Position(row: 2, column: 4), to: Position(row: 0, column: 0)) == "\u{1B}[2A\r")
        #expect(PromptLayout.move(from: Position(row: 0, column: 4), to: Position(row: 1, column: 3)) == "\u{1B}[1B\r\u{1B}[3C")
        #expect(PromptLayout.move(from: Position(row: 1, column: 1), to: Position(row: 1, column: 1)) == "")
    }
}
