import LineEditing

/// The names keys have in scripts (`self:key("ctrl-r", ...)`, `app.press("down")`), and the
/// terminal's keystrokes turned into them.
///
/// A printable character is its own name (`a`, `A`, `?`), except the space bar, `space`; Ctrl
/// plus a letter is `ctrl-r`, Alt plus a character `alt-x`; the other keys have the names in
/// ``named``. Keys the contract does not name (Ctrl-Up, Shift-Right…) still get a name
/// (`ctrl-up`), which no binding can use, so they fall through to the defaults.
enum KeyName {
    /// The keys with a word for a name, as `self:key` accepts them.
    static let named: [String] = ["enter", "esc", "tab", "shift-tab", "backspace", "delete", "insert",
                                  "up", "down", "left", "right", "pageup", "pagedown", "home", "end", "space"]
        + (1...12).map { "f\($0)" }

    /// The names of `key`: one per character for typed text (several characters can come in one
    /// read), one for any other key.
    static func names(of key: Key) -> [String] {
        switch key {
        case .text(let text), .paste(let text):
            return text.compactMap { character in
                character == " " ? "space" : character.isNewline ? "enter" : String(character)
            }
        case .control(let character):
            return ["ctrl-\(character)"]
        case .alt(let character):
            return ["alt-\(character == " " ? "space" : String(character))"]
        case .key(let name, let modifiers):
            var prefix = ""
            if modifiers.contains(.control) { prefix += "ctrl-" }
            if modifiers.contains(.alt) { prefix += "alt-" }
            if modifiers.contains(.shift), name != .backTab { prefix += "shift-" }
            return [prefix + word(name)]
        case .mouse:
            return []   // not a key: the terminal session hands it on as it is
        }
    }

    /// The keystroke a name stands for, as the terminal would have sent it: the inverse of
    /// ``names(of:)`` for the names a key can have (`a`, `space`, `ctrl-r`, `alt-x`, `shift-up`,
    /// `f5`); nil for a name no key has.
    static func key(named name: String) -> Key? {
        if name == "space" { return .text(" ") }
        if name.count == 1 { return .text(name) }
        var rest = Substring(name)
        var modifiers: Key.Modifiers = []
        while true {
            if rest.hasPrefix("ctrl-"), rest.count > 5 { rest = rest.dropFirst(5); modifiers.insert(.control) }
            else if rest.hasPrefix("alt-"), rest.count > 4 { rest = rest.dropFirst(4); modifiers.insert(.alt) }
            else if rest.hasPrefix("shift-"), rest != "shift-tab", rest.count > 6 { rest = rest.dropFirst(6); modifiers.insert(.shift) }
            else { break }
        }
        if rest.count == 1, let character = rest.first, modifiers == [.control] { return .control(character) }
        if rest.count == 1 || rest == "space", modifiers == [.alt] { return .alt(rest == "space" ? " " : rest.first ?? " ") }
        if let word = namesByWord[String(rest)] { return .key(word, modifiers: modifiers) }
        if rest.hasPrefix("f"), let number = Int(rest.dropFirst()), (1...12).contains(number) {
            return .key(.function(number), modifiers: modifiers)
        }
        return nil
    }

    /// The keys with a word for a name (F1–F12 aside), by that word: ``word(_:)`` turned round.
    private static let namesByWord: [String: Key.Name] = Dictionary(uniqueKeysWithValues:
        ([.enter, .tab, .backTab, .backspace, .delete, .insert, .escape, .up, .down, .left, .right, .home, .end, .pageUp, .pageDown]
            as [Key.Name]).map { (word($0), $0) })

    private static func word(_ name: Key.Name) -> String {
        switch name {
        case .enter: "enter"
        case .tab: "tab"
        case .backTab: "shift-tab"
        case .backspace: "backspace"
        case .delete: "delete"
        case .insert: "insert"
        case .escape: "esc"
        case .up: "up"
        case .down: "down"
        case .left: "left"
        case .right: "right"
        case .home: "home"
        case .end: "end"
        case .pageUp: "pageup"
        case .pageDown: "pagedown"
        case .function(let number): "f\(number)"
        }
    }
}
