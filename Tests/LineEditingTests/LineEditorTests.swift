import LineEditing
import Testing

/// Keystroke sequences in (the bytes a terminal sends), buffer and cursor out (`|` marks it).
@Suite struct LineEditorTests {
    typealias K = TestKeys

    @Test(arguments: [
        ("hello", "hello|"),
        ("hello" + K.left + K.left, "hel|lo"),
        ("hello" + K.ctrlB + K.ctrlB + K.ctrlF, "hell|o"),
        ("hello" + K.home + "> ", "> |hello"),
        ("hello" + K.ctrlA + K.ctrlE + "!", "hello!|"),
        ("hello" + K.end + K.home + K.right, "h|ello"),
        ("hello" + K.backspace + K.backspace, "hel|"),
        ("hello" + K.ctrlH, "hell|"),
        ("hello" + K.home + K.delete, "|ello"),
        ("hello" + K.home + K.ctrlD, "|ello"),
        ("local x = 1" + K.altB + K.altB, "local |x = 1"),
        ("local x = 1" + K.ctrlLeft + K.ctrlLeft + K.ctrlRight, "local x| = 1"),
        ("local x = 1" + K.home + K.altF + K.altF, "local x| = 1"),
        ("one two" + K.ctrlW, "one |"),
        ("f(a.b" + K.altBackspace, "f(a.|"),
        ("one two" + K.home + K.altD, "| two"),
        ("one two" + K.altB + K.ctrlK, "one |"),
        ("one two" + K.altB + K.ctrlU, "|two"),
        ("one two" + K.ctrlW + K.home + K.ctrlY, "two|one "),
        ("ab" + K.ctrlT, "ba|"),
        ("abc" + K.left + K.ctrlT, "acb|"),
        ("x" + K.altEnter + "y", "x\ny|"),
        (K.paste("a\r\nb"), "a\nb|"),
        ("ab" + K.left + K.paste("語😀"), "a語😀|b"),
        ("  " + K.tab, "    |"),
        ("x" + K.escape, "x|"),
    ] as [(String, String)])
    func editingKeys(_ input: String, _ expected: String) {
        #expect(marked(editor(after: input).buffer) == expected)
    }

    @Test(arguments: [
        ("語語" + K.left + K.backspace, "|語"),
        ("😀👩‍👩‍👧🇫🇷" + K.left + K.left + K.backspace, "|👩‍👩‍👧🇫🇷"),
        ("😀👩‍👩‍👧🇫🇷" + K.home + K.right + K.delete, "😀|🇫🇷"),
        ("cafe\u{301}" + K.backspace, "caf|"),
        ("日本語 text" + K.ctrlW + K.ctrlW, "|"),
        ("x = 日本語" + K.altB, "x = |日本語"),
        ("語a" + K.ctrlT, "a語|"),
        ("e" + "\u{301}" + K.left, "|e\u{301}"),
    ] as [(String, String)])
    func charactersMoveAndEraseAsOne(_ input: String, _ expected: String) {
        #expect(marked(editor(after: input).buffer) == expected)
    }

    @Test func killRingAcrossKeys() {
        let typed = "alpha beta gamma" + K.ctrlW + K.left + K.ctrlW + K.end + K.ctrlY
        #expect(marked(editor(after: typed).buffer) == "alpha  beta|")
        #expect(marked(editor(after: typed + K.altY).buffer) == "alpha  gamma|")
        #expect(marked(editor(after: typed + K.altY + K.altY).buffer) == "alpha  beta|")
        #expect(marked(editor(after: "a b" + K.ctrlW + K.ctrlW + K.ctrlY).buffer) == "a b|", "kills merged")
    }

    @Test func killRingOutlivesTheLine() {
        var editor = LineEditor()
        press("secret" + K.ctrlU, into: &editor)
        editor.startLine()
        press(K.ctrlY, into: &editor)
        #expect(marked(editor.buffer) == "secret|")
    }

    @Test func actions() {
        var editor = LineEditor()
        #expect((press("x", into: &editor) as [LineEditor.Action]) == [.edit])
        #expect((press(K.right, into: &editor) as [LineEditor.Action]) == [.none])
        #expect((press(K.ctrlL, into: &editor) as [LineEditor.Action]) == [.clearScreen])
        #expect((press(K.enter, into: &editor) as [LineEditor.Action]) == [.submit("x")])
        #expect(editor.buffer.text == "x", "the submitted line stays until startLine")
        #expect(editor.history.entries.isEmpty, "the host records history")
        editor.startLine(prompt: ".. ")
        #expect(editor.view.prompt == ".. ")
        #expect((press("y" + K.ctrlD, into: &editor) as [LineEditor.Action]) == [.edit, .none])
        #expect((press(K.backspace + K.ctrlD, into: &editor) as [LineEditor.Action]) == [.edit, .endOfInput])
    }

    @Test func editorModeEnterAddsALineAndCtrlDSubmits() {
        var editor = LineEditor()
        editor.submitsOnControlD = true
        #expect((press("local a = 1" + K.enter + "return a", into: &editor) as [LineEditor.Action]).last == .edit)
        #expect(marked(editor.buffer) == "local a = 1\nreturn a|")
        #expect((press(K.ctrlD, into: &editor) as [LineEditor.Action]) == [.submit("local a = 1\nreturn a")])
        editor.startLine()
        #expect((press(K.ctrlD, into: &editor) as [LineEditor.Action]) == [.submit("")], "even an empty text")
        editor.submitsOnControlD = false
        #expect((press(K.ctrlD, into: &editor) as [LineEditor.Action]) == [.endOfInput])
    }

    @Test func ctrlCClearsThenExitsOnASecondCtrlCOnAnEmptyLine() {
        var editor = LineEditor()
        #expect((press("abc" + K.ctrlC, into: &editor) as [LineEditor.Action]) == [.edit, .interrupt])
        #expect(editor.buffer.isEmpty)
        #expect(!editor.exitsOnNextInterrupt, "that Ctrl-C was not on an empty line")
        #expect((press(K.ctrlC, into: &editor) as [LineEditor.Action]) == [.interrupt])
        #expect(editor.exitsOnNextInterrupt)
        #expect((press(K.ctrlC, into: &editor) as [LineEditor.Action]) == [.exit])

        var other = LineEditor()
        #expect((press(K.ctrlC + "x" + K.backspace + K.ctrlC, into: &other) as [LineEditor.Action]) == [.interrupt, .edit, .edit, .interrupt],
                "a key in between disarms")
    }

    @Test func tabAsksTheHostToComplete() {
        var editor = LineEditor()
        let actions = press("print(services.loc)" + K.left + K.tab, into: &editor)
        let request = CompletionRequest(line: "print(services.loc)", prefix: "print(services.loc", cursor: 18)
        #expect(actions.last == .complete(request))
        #expect((editor.complete(request, with: ["location"], replacing: 3) as CompletionOutcome) == .inserted)
        #expect(marked(editor.buffer) == "print(services.location|)")
        #expect((editor.complete(request, with: ["location"], replacing: 3) as CompletionOutcome) == .stale)
    }

    @Test func completionInsertsTheCommonPrefixThenLists() throws {
        var editor = LineEditor()
        let actions = press("string.f", into: &editor) + press(K.tab, into: &editor)
        guard case .complete(let request) = try #require(actions.last) else { Issue.record("no request"); return }
        #expect((editor.complete(request, with: ["format", "find"], replacing: 1) as CompletionOutcome) == .candidates(["format", "find"]))
        #expect((editor.complete(request, with: [], replacing: 1) as CompletionOutcome) == .unchanged)
        #expect((editor.complete(request, with: ["f"], replacing: 1) as CompletionOutcome) == .unchanged)
        #expect((editor.complete(request, with: ["rep", "reverse", "rep"], replacing: 0) as CompletionOutcome) == .inserted)
        #expect(marked(editor.buffer) == "string.fre|")
    }

    @Test func upAndDownBrowseHistoryKeepingTheDraft() {
        let history = History(["print(1)", "for i = 1, 2 do\n  print(i)\nend", "x = 2"])
        var editor = LineEditor(history: history)
        press("dra", into: &editor)
        press(K.up, into: &editor)
        #expect(marked(editor.buffer) == "x = 2|")
        press(K.up, into: &editor)
        #expect(marked(editor.buffer) == "for i = 1, 2 do|\n  print(i)\nend", "the first line of a multi-line entry")
        press(K.down, into: &editor)
        #expect(marked(editor.buffer) == "for i = 1, 2 do\n  print(i)|\nend", "Down moves inside it")
        press(K.up + K.up + K.ctrlP, into: &editor)
        #expect(marked(editor.buffer) == "print(1)|")
        press(K.up, into: &editor)
        #expect(marked(editor.buffer) == "print(1)|", "the oldest")
        press(K.ctrlN, into: &editor)
        #expect(marked(editor.buffer) == "for i = 1, 2 do\n  print(i)\nend|", "coming down, the cursor is at the end")
        press(K.down, into: &editor)
        #expect(marked(editor.buffer) == "x = 2|")
        press(K.down, into: &editor)
        #expect(marked(editor.buffer) == "dra|")
        #expect((press(K.down, into: &editor) as [LineEditor.Action]) == [.none])
    }

    @Test func editsToRecalledLinesLastUntilSubmit() {
        var editor = LineEditor(history: History(["one", "two"]))
        press(K.up + "!" + K.up + K.down, into: &editor)
        #expect(editor.buffer.text == "two!")
        #expect((press(K.enter, into: &editor) as [LineEditor.Action]) == [.submit("two!")])
        editor.startLine()
        press(K.up, into: &editor)
        #expect(editor.buffer.text == "two")
    }

    @Test func viewShowsThePromptAndCursor() {
        let editor = editor(after: "ab" + K.left)
        #expect(editor.view == PromptView(prompt: "> ", continuationPrompt: ".. ", text: "ab", cursor: 1))
    }
}
