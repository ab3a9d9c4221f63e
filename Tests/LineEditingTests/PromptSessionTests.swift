import LineEditing
import Testing

/// The whole editor as bytes in, bytes out, checked on an emulated screen.
@Suite struct PromptSessionTests {
    typealias K = TestKeys

    /// A session and a screen, with the bytes of each step fed to the screen.
    private struct Harness {
        var session: PromptSession
        var screen: ScreenEmulator
        var events: [PromptSession.Event] = []

        init(width: Int = 40, history: History = History()) {
            session = PromptSession(editor: LineEditor(history: history), width: width)
            screen = ScreenEmulator(width: width, height: 10)
        }

        mutating func begin(_ prompt: String = "> ") {
            take(session.begin(prompt: prompt))
        }

        mutating func type(_ input: String) {
            take(session.receive(Array(input.utf8)))
        }

        mutating func take(_ output: PromptSession.Output) {
            screen.feed(output.bytes)
            events += output.events
        }
    }

    @Test func typeAndSubmit() {
        var harness = Harness()
        harness.begin()
        harness.type("print('語')" + K.left + K.left)
        #expect(harness.screen.lines == ["> print('語')"])
        #expect(harness.screen.cursor == (0, 11))
        harness.type(K.enter)
        #expect(harness.events == [.submit("print('語')")])
        #expect(!harness.session.isReading)
        harness.screen.feed("語\r\n")
        harness.begin()
        #expect(harness.screen.lines == ["> print('語')", "語", ">"])
        #expect(harness.screen.cursor == (2, 2))
    }

    @Test func bracketedPasteIsOnOnlyWhileReading() {
        var session = PromptSession()
        let begin = session.begin()
        #expect(begin.bytes == "\u{1B}[?2004h> ")
        let submit = session.receive(Array("x\r".utf8))
        #expect(submit.bytes.hasSuffix("\r\n\u{1B}[?2004l"))
        session.usesBracketedPaste = false
        #expect(session.begin().bytes == "> ")
    }

    @Test func typeAheadWaitsForTheNextPrompt() {
        var harness = Harness()
        harness.begin()
        harness.type("a = 1\rprint(a)\r")
        #expect(harness.events == [.submit("a = 1")], "the second line waits")
        harness.begin()
        #expect(harness.events == [.submit("a = 1"), .submit("print(a)")])
        #expect(harness.screen.lines == ["> a = 1", "> print(a)"])
    }

    @Test func outputAboveAPromptBeingTypedLeavesTheLineIntact() {
        var harness = Harness(width: 30)
        harness.begin()
        for (index, character) in "local answer = 42 -- 答え".enumerated() {
            harness.type(String(character))
            if index % 4 == 0 { harness.screen.feed(harness.session.printAbove("tick \(index / 4)")) }
        }
        harness.type(K.ctrlA + K.altF)
        harness.screen.feed(harness.session.printAbove("done\n"))
        #expect(harness.screen.allLines == ["tick 0", "tick 1", "tick 2", "tick 3", "tick 4", "tick 5", "done",
                                            "> local answer = 42 -- 答え"])
        #expect(harness.screen.cursor == (7, 7))
        #expect(harness.session.editor.buffer.text == "local answer = 42 -- 答え")
    }

    @Test func completionWaitsForTheHostsAnswer() throws {
        var harness = Harness()
        harness.begin()
        harness.type("pri" + K.tab + "(1)")
        let request = try #require(harness.session.pendingCompletion)
        #expect(harness.events == [.complete(request)])
        #expect(request.prefix == "pri")
        #expect(harness.screen.lines == ["> pri"], "the keys after Tab wait")
        harness.take(harness.session.complete(request, with: ["print"], replacing: 3))
        #expect(harness.screen.lines == ["> print(1)"])
        #expect(harness.session.pendingCompletion == nil)
        #expect(harness.session.complete(request, with: ["x"], replacing: 0) == PromptSession.Output(), "answered already")
    }

    @Test func ambiguousCompletionListsCandidatesAboveThePrompt() throws {
        var harness = Harness(width: 30)
        harness.begin()
        harness.type("string.f" + K.tab)
        let request = try #require(harness.session.pendingCompletion)
        harness.take(harness.session.complete(request, with: ["find", "format"], replacing: 1))
        #expect(harness.screen.lines == ["find    format", "> string.f"])
        harness.type("o" + K.tab)
        let again = try #require(harness.session.pendingCompletion)
        harness.take(harness.session.complete(again, with: ["format"], replacing: 2))
        #expect(harness.screen.lines == ["find    format", "> string.format"])
    }

    @Test func ctrlCShowsTheAbandonedLineAndStartsAFreshOne() {
        var harness = Harness()
        harness.begin()
        harness.type("while true do" + K.ctrlC)
        #expect(harness.events == [.interrupt])
        #expect(harness.session.isReading)
        #expect(harness.screen.lines == ["> while true do^C", ">"])
        harness.type(K.ctrlC)
        #expect(harness.session.editor.exitsOnNextInterrupt)
        harness.screen.feed(harness.session.printAbove("(press Ctrl-C again to exit)"))
        harness.type(K.ctrlC)
        #expect(harness.events == [.interrupt, .interrupt, .exit])
        #expect(!harness.session.isReading)
        #expect(harness.screen.lines == ["> while true do^C", "> ^C", "(press Ctrl-C again to exit)", "> ^C"])
    }

    @Test func ctrlDOnAnEmptyLineEndsInput() {
        var harness = Harness()
        harness.begin()
        harness.type("x" + K.backspace + K.ctrlD + "ignored")
        #expect(harness.events == [.endOfInput])
        #expect(!harness.session.isReading)
        #expect(harness.screen.lines == [">"])
        #expect(harness.screen.cursor == (1, 0))
    }

    @Test func ctrlLClearsTheScreen() {
        var harness = Harness()
        harness.screen.feed("old output\r\n")
        harness.begin()
        harness.type("x" + K.ctrlL + "y")
        #expect(harness.screen.lines == ["> xy"])
    }

    @Test func aLoneEscapeIsFlushedAfterATimeout() {
        var harness = Harness()
        harness.begin()
        harness.type(K.ctrlR + "x" + K.escape)
        #expect(harness.session.isAwaitingMoreBytes)
        #expect(harness.session.editor.search != nil)
        harness.take(harness.session.flushInput())
        #expect(harness.session.editor.search == nil)
    }

    @Test func searchIsDrawnInThePrompt() {
        var harness = Harness(history: History(["print('hello')", "x = 1"]))
        harness.begin()
        harness.type(K.ctrlR + "hel")
        #expect(harness.screen.lines == ["(reverse-i-search)`hel': print('hello')"])
        #expect(harness.screen.cursor == (0, 32))
        harness.type(K.enter)
        #expect(harness.screen.lines == ["> print('hello')"], "the line as it runs")
        #expect(harness.events == [.submit("print('hello')")])
    }

    @Test func multiLineHistoryEntriesAreDrawnWithContinuationPrompts() {
        var harness = Harness(history: History(["function f()\n  return 1\nend"]))
        harness.begin()
        harness.type(K.up)
        #expect(harness.screen.lines == ["> function f()", "..   return 1", ".. end"])
        #expect(harness.screen.cursor == (0, 14))
        harness.type(K.enter)
        #expect(harness.events == [.submit("function f()\n  return 1\nend")])
        #expect(harness.screen.cursor == (3, 0))
    }

    @Test func resizeAndRedraw() {
        var harness = Harness(width: 20)
        harness.begin()
        harness.type("0123456789")
        harness.session.editor.prompt = "lua> "
        harness.screen.feed(harness.session.redraw())
        #expect(harness.screen.lines == ["lua> 0123456789"])
        #expect(harness.session.resize(width: 10).hasSuffix("lua> 0123456789"))
        #expect(harness.session.renderer.width == 10)
    }

    @Test func endLeavesTheLineAndStopsReading() {
        var harness = Harness()
        harness.begin()
        harness.type("half")
        harness.screen.feed(harness.session.end())
        #expect(!harness.session.isReading)
        #expect(harness.session.end() == "")
        harness.type("more")
        #expect(harness.screen.lines == ["> half"])
        #expect(harness.screen.cursor == (1, 0))
    }
}
