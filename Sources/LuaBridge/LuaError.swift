/// An error that came out of Lua: a runtime error, a syntax error, the memory limit or an interrupt.
///
/// `message` is what Lua reported, with the traceback when the call had one.
public struct LuaError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, in kinds the host reacts to differently.
    public enum Kind: Sendable, Equatable {
        case runtime
        case syntax
        case memory
        case interrupted
        case timeout
        case handler
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// An error a Swift function raises into Lua, as an argument error or a plain message.
///
/// Thrown from a function exported with ``LuaVM/makeFunction(_:)``, it becomes a Lua error whose
/// message is prefixed with the caller's `file:line`, as `luaL_error` would.
public struct LuaRaise: Error, CustomStringConvertible, Sendable {
    public var message: String

    public init(_ message: String) { self.message = message }

    /// `bad argument #2 to 'get' (number expected, got string)`: Lua's own wording.
    public static func badArgument(_ position: Int, to function: String, _ reason: String) -> LuaRaise {
        LuaRaise("bad argument #\(position) to '\(function)' (\(reason))")
    }

    public var description: String { message }
}

/// An error whose Lua value the thrower pushes itself (for example a table with a `code`).
public protocol LuaPushableError: Error {
    /// Pushes exactly one value: the error object Lua code will see.
    func push(onto stack: LuaStack)
}
