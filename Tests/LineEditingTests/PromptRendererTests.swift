import LineEditing
import Testing

/// The renderer's bytes, and what a terminal shows after them.
@Suite struct PromptRendererTests {
    private func view(_ text: String, cursor: Int? = nil) -> PromptView {
        PromptView(prompt: "> ", continuationPrompt: ".. ", text: text, cursor: cursor)
    }

    @Test func redrawReplacesTheLineInPlace() {
        var renderer = PromptRenderer(width: 80)
        var screen = ScreenEmulator(width: 80)
        screen.feed("earlier output\r\n")
        screen.feed(renderer.render(view("print(1)")))
        #expect(renderer.render(view("print(12)", cursor: 7)) == "\r\u{1B}[J> print(12)\r\u{1B}[9C")
        screen.feed(renderer.render(view("print(12)", cursor: 7)))
        #expect(screen.lines == ["earlier output", "> print(12)"])
        #expect(screen.cursor == (1, 9))
    }

    @Test func aWrappedLineRedrawsWithoutLeftovers() {
        var renderer = PromptRenderer(width: 10)
        var screen = ScreenEmulator(width: 10)
        screen.feed(renderer.render(view(String(repeating: "x", count: 25), cursor: 3)))
        #expect(screen.lines == ["> xxxxxxxx", "xxxxxxxxxx", "xxxxxxx"])
        #expect(screen.cursor == (0, 5))
        screen.feed(renderer.render(view("short")))
        #expect(screen.lines == ["> short"])
        #expect(screen.cursor == (0, 7))
    }

    @Test func hideAndShow() {
        var renderer = PromptRenderer(width: 10)
        _ = renderer.render(view("abcdefghijk", cursor: 10))
        #expect(renderer.hide() == "\u{1B}[1A\r\u{1B}[J", "up to the first row, erase below")
        #expect(!renderer.isShown)
        #expect(renderer.hide() == "", "already hidden")
        #expect(renderer.show() == "> abcdefghijk\r\u{1B}[2C")
        #expect(renderer.show() == "", "already shown")
    }

    @Test func outputPrintedAboveLeavesTheLineIntact() {
        var renderer = PromptRenderer(width: 20)
        var screen = ScreenEmulator(width: 20, height: 6)
        let line = view("local 語 = 'half-typed'", cursor: 7)
        screen.feed(renderer.render(line))
        for tick in 1...8 {
            screen.feed(renderer.printAbove("tick \(tick)"))
        }
        screen.feed(renderer.printAbove("two\nlines\n"))
        #expect(screen.allLines == [
            "tick 1", "tick 2", "tick 3", "tick 4", "tick 5", "tick 6", "tick 7", "tick 8", "two", "lines",
            "> local 語 = 'half-t", "yped'",
        ])
        #expect(screen.cursor == (4, 10), "still after 語")
    }

    @Test func printAboveWithoutAPrompt() {
        var renderer = PromptRenderer(width: 20)
        #expect(renderer.printAbove("a\nb") == "a\r\nb\r\n")
        #expect(renderer.printAbove("") == "")
        _ = renderer.render(view("x"))
        _ = renderer.hide()
        #expect(renderer.printAbove("c\r\n") == "c\r\n", "hidden by the host: it stays hidden")
        #expect(renderer.show() == "> x")
    }

    @Test func commitMovesBelowTheWholeInput() {
        var renderer = PromptRenderer(width: 10)
        var screen = ScreenEmulator(width: 10)
        screen.feed(renderer.render(view("for i=1,2 do\nprint(i)\nend", cursor: 2)))
        #expect(screen.cursor == (0, 4))
        screen.feed(renderer.commit())
        screen.feed("1\r\n2\r\n")
        #expect(screen.lines == ["> for i=1,", "2 do", ".. print(i", ")", ".. end", "1", "2"])
        #expect(!renderer.isShown)
        #expect(renderer.commit() == "")
    }

    @Test func commitOfAFullRowAddsNoBlankLine() {
        var renderer = PromptRenderer(width: 6)
        var screen = ScreenEmulator(width: 6)
        screen.feed(renderer.render(view("abcd")))
        screen.feed(renderer.commit())
        screen.feed("out\r\n")
        #expect(screen.lines == ["> abcd", "out"])
    }

    @Test func resizeRedrawsAtTheNewWidth() {
        var renderer = PromptRenderer(width: 20)
        var screen = ScreenEmulator(width: 20)
        screen.feed("above\r\n")
        screen.feed(renderer.render(view("0123456789abcdefghij")))
        #expect(renderer.resize(width: 20) == "", "same width")
        let bytes = renderer.resize(width: 10)
        // A reflowing terminal now has the old 2 rows as 3 rows of 10, the cursor on the third.
        #expect(bytes.hasPrefix("\u{1B}[2A\r\u{1B}[J> 01234567"))
        #expect(renderer.width == 10)
        #expect(renderer.shown?.rowCount == 3)
    }

    @Test func clearScreenDrawsAtTheTop() {
        var renderer = PromptRenderer(width: 20)
        var screen = ScreenEmulator(width: 20)
        screen.feed("lots\r\nof\r\noutput\r\n")
        screen.feed(renderer.render(view("x = 1", cursor: 0)))
        screen.feed(renderer.clearScreen())
        #expect(screen.lines == ["> x = 1"])
        #expect(screen.cursor == (0, 2))
        var empty = PromptRenderer(width: 20)
        #expect(empty.clearScreen() == "\u{1B}[H\u{1B}[2J")
    }
}
