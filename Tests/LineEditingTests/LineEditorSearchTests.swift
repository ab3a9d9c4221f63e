import LineEditing
import Testing

/// Ctrl-R through the editor: the view while searching, accept, cancel, run.
@Suite struct LineEditorSearchTests {
    typealias K = TestKeys
    let history = History(["print(1)", "local x = 2", "print(x)"])

    @Test func searchShowsTheMatchInThePrompt() {
        var editor = LineEditor(history: history)
        press("draft" + K.ctrlR + "pri", into: &editor)
        #expect(editor.view.prompt == "(reverse-i-search)`pri': ")
        #expect(editor.view.text == "print(x)")
        #expect(editor.view.cursor == 0)
        press(K.ctrlR, into: &editor)
        #expect(editor.view.text == "print(1)")
        press(K.ctrlR, into: &editor)
        #expect(editor.view.prompt == "(failed reverse-i-search)`pri': ")
        #expect(editor.view.text == "print(1)")
        #expect(editor.buffer.text == "draft", "the buffer is untouched until accept")
    }

    @Test func anEmptyQueryShowsTheLine() {
        var editor = LineEditor(history: history)
        press("draft" + K.left + K.ctrlR, into: &editor)
        #expect(editor.view.prompt == "(reverse-i-search)`': ")
        #expect(editor.view.text == "draft")
        #expect(editor.view.cursor == 4)
    }

    @Test func escapeOrAMotionAcceptsForEditing() {
        var editor = LineEditor(history: history)
        press(K.ctrlR + "x =" + K.escape, into: &editor)
        #expect(editor.search == nil)
        #expect(marked(editor.buffer) == "local |x = 2", "the cursor where it matched")
        var other = LineEditor(history: history)
        press(K.ctrlR + "local" + K.ctrlE + "0", into: &other)
        #expect(marked(other.buffer) == "local x = 20|", "the key acts after accepting")
        press(K.down, into: &other)
        #expect(other.buffer.text == "print(x)", "browsing goes on from the accepted entry")
    }

    @Test func ctrlGCancels() {
        var editor = LineEditor(history: history)
        press("draft" + K.left + K.ctrlR + "loc" + K.ctrlG, into: &editor)
        #expect(editor.search == nil)
        #expect(marked(editor.buffer) == "draf|t")
        #expect(editor.view.prompt == "> ")
    }

    @Test func enterRunsTheMatch() {
        var editor = LineEditor(history: history)
        let actions = press(K.ctrlR + "1" + K.enter, into: &editor)
        #expect(actions == [.edit, .edit, .submit("print(1)")])
        #expect(editor.view == PromptView(prompt: "> ", continuationPrompt: ".. ", text: "print(1)", cursor: 6))
    }

    @Test func ctrlCLeavesTheSearchAndClearsTheLine() {
        var editor = LineEditor(history: history)
        let actions = press("x" + K.ctrlR + "pr" + K.ctrlC, into: &editor)
        #expect(actions.last == .interrupt)
        #expect(editor.search == nil)
        #expect(editor.buffer.isEmpty)
    }

    @Test func backspaceShortensTheQuery() {
        var editor = LineEditor(history: history)
        press(K.ctrlR + "print(x" + K.backspace + K.backspace, into: &editor)
        #expect(editor.search?.query == "print")
        #expect(editor.view.text == "print(x)")
    }

    @Test func ctrlRTwiceReusesThePreviousQuery() {
        var editor = LineEditor(history: history)
        press(K.ctrlR + "local" + K.ctrlG, into: &editor)
        press(K.ctrlR + K.ctrlR, into: &editor)
        #expect(editor.search?.query == "local")
        #expect(editor.view.text == "local x = 2")
    }

    @Test func searchAfterTheHistoryChanged() {
        var editor = LineEditor(history: history)
        press("x = 3" + K.enter, into: &editor)
        editor.history.add("x = 3")
        editor.startLine()
        press(K.ctrlR + "x =" + K.escape, into: &editor)
        #expect(marked(editor.buffer) == "|x = 3")
    }
}
