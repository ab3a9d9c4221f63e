import LuaBridge

/// Who is being called, so argument errors use the right wording and numbering: a global in
/// Lua's own style (`bad argument #2 to 'observe' (string expected, got number)`), or an
/// object's method in the style of service methods, counting from the first argument after self
/// (`thermostat:observe(key, handler[, options]): argument #1 must be a string, got number`).
struct CallSite {
    let function: StaticString
    /// The method's signature; nil for a global function.
    let signature: String?

    static func global(_ function: StaticString) -> CallSite { CallSite(function: function, signature: nil) }
    static func method(_ function: StaticString, _ signature: String) -> CallSite { CallSite(function: function, signature: signature) }

    /// Argument `position` (a stack index) is not `expected` (`a string`, `a function`).
    func mismatch(_ stack: LuaStack, _ position: Int32, expected: String) -> LuaRaise {
        let got = stack.type(at: position) == .none ? "no value" : stack.typeName(at: position)
        if let signature { return LuaRaise("\(signature): argument #\(position - 1) must be \(expected), got \(got)") }
        let word = expected.split(separator: " ", maxSplits: 1).last.map(String.init) ?? expected
        return stack.argumentError(position, function: function, expected: word)
    }

    /// Argument `position` is wrong for `reason` (a phrase: `unknown option 'x'`).
    func invalid(_ position: Int32, _ reason: String) -> LuaRaise {
        if let signature { return LuaRaise("\(signature): argument #\(position - 1): \(reason)") }
        return .badArgument(Int(position), to: "\(function)", reason)
    }

    func string(_ stack: LuaStack, _ position: Int32) throws(LuaRaise) -> String {
        guard let text = stack.text(at: position) else { throw mismatch(stack, position, expected: "a string") }
        return text
    }

    func function(_ stack: LuaStack, _ position: Int32) throws(LuaRaise) {
        guard stack.type(at: position) == .function else { throw mismatch(stack, position, expected: "a function") }
    }
}
