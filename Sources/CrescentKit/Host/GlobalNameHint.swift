import LuaBridge
import Model

/// Lua's "attempt to index a nil value (global 'servies')" with the global the name most likely
/// misspells (`services`, `controller` for `Controller`), as Python's NameError says "Did you
/// mean". Only the message grows: reading a global that is not set stays nil, since scripts test
/// their own globals with `if x == nil`.
enum GlobalNameHint {
    /// `message` with `; did you mean 'services'?` after its `(global 'servies')`, when one of
    /// the VM's globals is close; else `message` as it is. Runs on the loop, reading `_G` raw.
    static func hinted(_ message: String, in vm: LuaVM, isPlugin: Bool = false) -> String {
        let marker = " a nil value (global '"
        guard let first = message.split(separator: "\n", maxSplits: 1).first, let cut = first.firstRange(of: marker) else { return message }
        let rest = message[cut.upperBound...]
        guard let quote = rest.firstIndex(of: "'"), rest[quote...].hasPrefix("')") else { return message }
        let name = String(rest[..<quote])
        let end = rest.index(quote, offsetBy: 2)
        if name == "self" {
            // `function C.viewDidLoad() self:key(...) end`: `self` is a parameter only of a
            // function defined (or called) with ':'.
            return String(message[..<end]) + "; self is set only in a function defined with ':' (function C:viewDidLoad(), not "
                + "C.viewDidLoad) and called with ':' (obj:method())" + String(message[end...])
        }
        if isPlugin, scriptGlobals.contains(name) {
            // A Lua plugin runs in its own VM, which serves data: the screen is the script's.
            return String(message[..<end]) + "; a plugin has no view, app or controller: it serves its service's properties, methods "
                + "and events, and the script that uses the service shows them" + String(message[end...])
        }
        if specGlobals.contains(name) {
            return String(message[..<end]) + "; \(name) is defined in specs: run the file with crescent test FILE" + String(message[end...])
        }
        guard let closest = NameSuggestion.closest(to: name, among: globalNames(in: vm)) else { return message }
        return String(message[..<end]) + "; did you mean '\(closest)'?" + String(message[end...])
    }

    /// `no global 'servies'; did you mean 'services'?` for a line typed at a prompt that is only
    /// the name (or `=name`) of a global that is not set and is close to one that is: the value
    /// printed there is the answer, and a bare `nil` said nothing of the misspelling. Nil
    /// otherwise. Runs on the loop, before the line, reading `_G` raw.
    static func unsetName(typed text: String, in vm: LuaVM) -> String? {
        var name = Substring(text).drop { $0 == " " || $0 == "\t" }
        if name.hasPrefix("=") { name = name.dropFirst().drop { $0 == " " || $0 == "\t" } }
        while let last = name.last, last == " " || last == "\t" || last == "\n" || last == "\r" { name = name.dropLast() }
        func isLetter(_ scalar: Unicode.Scalar) -> Bool { scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) }
        guard let first = name.unicodeScalars.first, isLetter(first),
              name.unicodeScalars.allSatisfy({ isLetter($0) || ("0"..."9").contains($0) }),
              !["nil", "true", "false"].contains(name) else { return nil }
        let stack = vm.stack
        let top = stack.top
        defer { stack.setTop(top) }
        guard stack.ensure(2) else { return nil }
        stack.pushGlobals()                                                           // G
        guard stack.type(at: -1) == .table, stack.rawGet(-1, String(name)) == .nil else { return nil }  // G value
        guard let closest = NameSuggestion.closest(to: String(name), among: globalNames(in: vm)) else { return nil }
        return "no global '\(name)'; did you mean '\(closest)'?"
    }

    /// The line printed for a typed line's `nil` value that `unsetName` explained: the value,
    /// then the note as a Lua comment, so the line still reads as Lua. The REPL's and a remote
    /// eval's one wording.
    static func nilLine(note: String) -> String { "nil  -- \(note)" }

    /// Globals of a script's VM that a plugin's has not.
    static let scriptGlobals: Set<String> = ["view", "app", "controller"]

    /// Globals `crescent test` defines: a spec run as a script (`crescent spec/main_spec.lua`)
    /// fails on the first.
    static let specGlobals: Set<String> = ["describe", "it", "before_each", "after_each", "setup", "teardown", "pending", "fake",
                                           "clock", "script", "send", "press", "view_text", "screen_text", "spy", "stub", "mock"]

    /// The names of the globals that hold a value (`_G`'s string keys, read raw: no script code runs).
    private static func globalNames(in vm: LuaVM) -> [String] {
        let stack = vm.stack
        let top = stack.top
        defer { stack.setTop(top) }
        guard stack.ensure(3) else { return [] }
        stack.pushGlobals()                                                           // G
        guard stack.type(at: -1) == .table else { return [] }
        var names: [String] = []
        stack.pushNil()                                                               // G key
        while stack.next(in: -2) {                                                    // G key value
            if stack.type(at: -2) == .string, let key = stack.text(at: -2), !key.hasPrefix("_") { names.append(key) }
            stack.pop()                                                               // G key
        }
        return names
    }
}
