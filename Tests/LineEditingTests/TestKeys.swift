import LineEditing

/// Bytes a terminal sends for keys, to write keystroke sequences readably:
/// `"abc" + TestKeys.left + TestKeys.ctrlK`.
enum TestKeys {
    static let ctrlA = "\u{01}", ctrlB = "\u{02}", ctrlC = "\u{03}", ctrlD = "\u{04}", ctrlE = "\u{05}"
    static let ctrlF = "\u{06}", ctrlG = "\u{07}", ctrlH = "\u{08}", ctrlK = "\u{0B}", ctrlL = "\u{0C}"
    static let ctrlN = "\u{0E}", ctrlP = "\u{10}", ctrlR = "\u{12}", ctrlT = "\u{14}", ctrlU = "\u{15}"
    static let ctrlW = "\u{17}", ctrlY = "\u{19}"
    static let tab = "\t", enter = "\r", backspace = "\u{7F}", escape = "\u{1B}"
    static let left = "\u{1B}[D", right = "\u{1B}[C", up = "\u{1B}[A", down = "\u{1B}[B"
    static let home = "\u{1B}[H", end = "\u{1B}[F", delete = "\u{1B}[3~"
    static let ctrlLeft = "\u{1B}[1;5D", ctrlRight = "\u{1B}[1;5C"
    static let altB = "\u{1B}b", altF = "\u{1B}f", altD = "\u{1B}d", altY = "\u{1B}y"
    static let altBackspace = "\u{1B}\u{7F}", altEnter = "\u{1B}\r"

    static func paste(_ text: String) -> String { "\u{1B}[200~" + text + "\u{1B}[201~" }
}

/// The buffer's text with `|` where the cursor is: `"hel|lo"`.
func marked(_ buffer: LineBuffer) -> String {
    String(buffer.characters[..<buffer.cursor]) + "|" + String(buffer.characters[buffer.cursor...])
}

/// Decodes `input` as terminal bytes and feeds every key to `editor`; returns the actions.
@discardableResult
func press(_ input: String, into editor: inout LineEditor) -> [LineEditor.Action] {
    var decoder = KeyDecoder()
    let keys = decoder.decode(Array(input.utf8)) + decoder.flush()
    return keys.map { editor.handle($0) }
}

/// A fresh editor (with `history`) after `input` was typed.
func editor(after input: String, history: History = History()) -> LineEditor {
    var editor = LineEditor(history: history)
    press(input, into: &editor)
    return editor
}

// `#expect` cannot capture a mutating call on a local (`#expect(line.insert("x"))` does not
// compile), so tests write `#expect(line.insert("x") as Bool)`: the cast keeps the call whole.
