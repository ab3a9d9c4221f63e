import LineEditing
import Testing

/// The editing state as a pure value: operations in, text and cursor out (`|` marks the cursor).
@Suite struct LineBufferTests {
    @Test func insertAtTheCursor() {
        var line = LineBuffer("held", cursor: 3)
        #expect(line.insert("lo wor") as Bool)
        #expect(marked(line) == "hello wor|d")
        #expect(!(line.insert("") as Bool))
    }

    @Test func initClampsTheCursor() {
        #expect(marked(LineBuffer("abc", cursor: 9)) == "abc|")
        #expect(marked(LineBuffer("abc", cursor: -1)) == "|abc")
        #expect(marked(LineBuffer("abc")) == "abc|")
    }

    @Test func carriageReturnsBecomeNewlines() {
        let line = LineBuffer("a\r\nb\rc")
        #expect(line.text == "a\nb\nc")
        #expect(line.characters.count == 5)
    }

    @Test func deleteBackwardAndForward() {
        var line = LineBuffer("abcd", cursor: 2)
        #expect(line.deleteBackward() as Bool)
        #expect(marked(line) == "a|cd")
        #expect(line.deleteForward() as Bool)
        #expect(marked(line) == "a|d")
        line.moveCursor(to: 0)
        #expect(!(line.deleteBackward() as Bool))
        line.moveCursor(to: 2)
        #expect(!(line.deleteForward() as Bool))
    }

    @Test(arguments: ["語", "😀", "👩‍👩‍👧", "🇫🇷", "e\u{301}", "a\u{301}\u{328}", "1️⃣"])
    func wideAndComposedCharactersMoveAndEraseAsOne(_ character: String) {
        var line = LineBuffer("x" + character + "y")
        #expect(line.characters.count == 3)
        line.moveLeft()
        line.moveLeft()
        #expect(marked(line) == "x|" + character + "y")
        line.moveRight()
        #expect(marked(line) == "x" + character + "|y")
        line.deleteBackward()
        #expect(marked(line) == "x|y")
        line.insert(character)
        line.moveLeft()
        line.deleteForward()
        #expect(marked(line) == "x|y")
    }

    @Test func partsTypedSeparatelyJoinTheCharacterBefore() {
        var line = LineBuffer()
        line.insert("e")
        line.insert("\u{301}")  // a combining acute typed on its own
        #expect(line.characters == ["e\u{301}"])
        #expect(line.cursor == 1)
        line.insert("👩")
        line.insert("\u{200D}")
        line.insert("💻")  // a ZWJ sequence typed a piece at a time
        #expect(line.characters == ["e\u{301}", "👩‍💻"])
        line.insert("🇫")
        line.insert("🇷")
        line.insert("🇩")
        line.insert("🇪")
        #expect(line.characters.suffix(2) == ["🇫🇷", "🇩🇪"])
        #expect(line.cursor == 4)
    }

    @Test func deletingASeparatorLetsNeighboursJoin() {
        var line = LineBuffer("e\n\u{301}", cursor: 2)
        #expect(line.characters.count == 3)
        line.deleteBackward()
        #expect(line.characters == ["e\u{301}"])
        #expect(line.cursor == 1)
    }

    @Test func leftRightStopAtTheEnds() {
        var line = LineBuffer("ab", cursor: 0)
        #expect(!(line.moveLeft() as Bool))
        #expect(line.moveRight() as Bool)
        #expect(line.moveRight() as Bool)
        #expect(!(line.moveRight() as Bool))
        #expect(marked(line) == "ab|")
    }

    @Test func wordMotions() {
        var line = LineBuffer("local answer = foo.bar(42)")
        line.moveWordLeft()
        #expect(marked(line) == "local answer = foo.bar(|42)")
        line.moveWordLeft()
        #expect(marked(line) == "local answer = foo.|bar(42)")
        line.moveWordLeft()
        line.moveWordLeft()
        #expect(marked(line) == "local |answer = foo.bar(42)")
        line.moveWordRight()
        #expect(marked(line) == "local answer| = foo.bar(42)")
        line.moveWordRight()
        #expect(marked(line) == "local answer = foo|.bar(42)")
        line.moveToEnd()
        #expect(!(line.moveWordRight() as Bool))
    }

    @Test func wordMotionsOverCJKAndEmoji() {
        var line = LineBuffer("x = 日本語 😀 ok")
        line.moveWordLeft()
        #expect(marked(line) == "x = 日本語 😀 |ok")
        line.moveWordLeft()
        #expect(marked(line) == "x = |日本語 😀 ok", "an emoji is not a word character")
        line.moveWordRight()
        #expect(marked(line) == "x = 日本語| 😀 ok")
    }

    @Test func lineStartAndEndInAMultiLineText() {
        var line = LineBuffer("for i = 1, 3 do\n  print(i)\nend", cursor: 21)
        #expect(marked(line) == "for i = 1, 3 do\n  pri|nt(i)\nend")
        line.moveToLineStart()
        #expect(marked(line) == "for i = 1, 3 do\n|  print(i)\nend")
        line.moveToLineEnd()
        #expect(marked(line) == "for i = 1, 3 do\n  print(i)|\nend")
        line.moveToStart()
        #expect(line.cursor == 0)
        line.moveToEnd()
        #expect(line.cursor == line.characters.count)
    }

    @Test func upAndDownInsideAMultiLineTextKeepTheColumn() {
        var line = LineBuffer("function f()\n  return 語語\nend", cursor: 24)
        #expect(marked(line) == "function f()\n  return 語語|\nend")
        #expect(line.moveLineUp() as Bool)
        #expect(marked(line) == "function f()|\n  return 語語\nend", "column 13 is past the end of line 1")
        #expect(!(line.moveLineUp() as Bool))
        line.moveCursor(to: 10)
        #expect(line.moveLineDown() as Bool)
        #expect(marked(line) == "function f()\n  return |語語\nend")
        line.moveRight()
        #expect(line.columnsBeforeCursor == 11)
        #expect(line.moveLineUp() as Bool)
        #expect(marked(line) == "function f(|)\n  return 語語\nend")
        line.moveCursor(to: 23)
        #expect(line.moveLineDown() as Bool)
        #expect(marked(line) == "function f()\n  return 語語\nend|")
        #expect(!(line.moveLineDown() as Bool))
        #expect(line.isOnLastLine)
    }

    @Test func columnsBeforeTheCursor() {
        #expect(LineBuffer("héllo 世界").columnsBeforeCursor == 10)
        #expect(LineBuffer("👩‍👩‍👧x", cursor: 1).columnsBeforeCursor == 2)
        #expect(LineBuffer("e\u{301}\u{301}").columnsBeforeCursor == 1)
        #expect(LineBuffer("long first line\n語x").columnsBeforeCursor == 3, "counted from the line's start")
        #expect(LineBuffer("\tx").columnsBeforeCursor == 5)
    }

    @Test func transpose() {
        var line = LineBuffer("abcd", cursor: 1)
        #expect(line.transpose() as Bool)
        #expect(marked(line) == "ba|cd")
        line.moveToEnd()
        #expect(line.transpose() as Bool)
        #expect(marked(line) == "badc|", "at the end, the last two swap")
        line.moveToStart()
        #expect(!(line.transpose() as Bool))
        var wide = LineBuffer("語😀", cursor: 1)
        wide.transpose()
        #expect(marked(wide) == "😀語|")
        var single = LineBuffer("a")
        #expect(!(single.transpose() as Bool))
    }

    @Test func setTextKeepsTheKillRing() {
        var line = LineBuffer("one two")
        line.killWordBackward()
        line.setText("x = 1")
        #expect(marked(line) == "x = 1|")
        line.setText("y", cursor: 0)
        line.yank()
        #expect(marked(line) == "two|y")
    }

    @Test func replaceBeforeCursor() {
        var line = LineBuffer("print(services.loc)", cursor: 18)
        #expect(line.replaceBeforeCursor(3, with: "location") as Bool)
        #expect(marked(line) == "print(services.location|)")
        #expect(!(line.replaceBeforeCursor(8, with: "location") as Bool))
    }

    @Test func textAroundTheCursor() {
        let line = LineBuffer("ab語cd", cursor: 3)
        #expect(line.textBeforeCursor == "ab語")
        #expect(line.textAfterCursor == "cd")
        #expect(!line.isEmpty)
        #expect(LineBuffer().isEmpty)
    }
}
