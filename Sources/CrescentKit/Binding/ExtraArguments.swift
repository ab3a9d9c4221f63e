import LuaBridge

/// The error for an argument past the last one a function takes, worded as the service methods
/// word it: `timer.after(seconds, fn): argument #3 is one too many (it takes seconds and a
/// function)`. Lua drops extra arguments without a word, and a script that passes one (expecting
/// `timer.after(1, f, "x")` to hand `"x"` to `f`) learns nothing from the silence.
///
/// Trailing nils are no arguments (`f(a, nil)` is `f(a)` to Lua's own functions too); the extra
/// named is the first value past the last one taken that is not nil.
enum ExtraArguments {
    /// Throws when a value that is not nil sits past stack index `count`.
    ///
    /// - Parameters:
    ///   - count: how many stack slots the function takes, `self` included for a method.
    ///   - signature: the signature the message starts with (built only for the error).
    ///   - arity: what it takes, in words (`seconds and a function`).
    ///   - isMethod: true when slot 1 is `self`, so the argument numbers count from slot 2.
    static func check(_ stack: LuaStack, takes count: Int32, signature: @autoclosure () -> String,
                      arity: @autoclosure () -> String, isMethod: Bool = false) throws(LuaRaise) {
        let top = stack.top
        guard top > count else { return }
        var extra = count + 1
        while extra <= top, stack.isNoneOrNil(extra) { extra += 1 }
        guard extra <= top else { return }
        throw LuaRaise("\(signature()): argument #\(isMethod ? extra - 1 : extra) is one too many (it takes \(arity()))")
    }
}
