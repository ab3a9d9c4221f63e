public import CLua

/// The body of a Swift function callable from Lua.
///
/// It reads its arguments from the stack (`1...stack.top`), pushes its results and returns how many
/// it pushed, or ``LuaReturn/yield(_:)`` inside a coroutine. Throwing turns into a Lua error raised by
/// the C trampoline after this frame is gone: a ``LuaRaise`` message gets the caller's `file:line`,
/// a ``LuaPushableError`` pushes its own value (raised as it is), any other error becomes its
/// description (with the caller's position).
public typealias LuaFunctionBody = (LuaStack) throws -> LuaReturn

/// What a Swift function tells the trampoline: results to return, or values to yield.
public struct LuaReturn: Sendable {
    @usableFromInline let status: Int32

    @inlinable init(status: Int32) { self.status = status }

    /// Return the top `count` values.
    @inlinable public static func values(_ count: Int32) -> LuaReturn { LuaReturn(status: count) }
    /// Return nothing.
    @inlinable public static var none: LuaReturn { LuaReturn(status: 0) }
    /// Return the one value on top.
    @inlinable public static var one: LuaReturn { LuaReturn(status: 1) }
    /// Yield the top `count` values from the running coroutine (check ``LuaStack/isYieldable`` first).
    @inlinable public static func yield(_ count: Int32) -> LuaReturn { LuaReturn(status: crescent_yield_status(count)) }
}

/// Owns the closure behind one exported function. The VM keeps every box until it closes, so the
/// unretained pointer in the Lua closure's upvalue stays valid as long as Lua can call it.
final class LuaFunctionBox {
    let body: LuaFunctionBody
    init(_ body: @escaping LuaFunctionBody) { self.body = body }
}

/// The one C-callable entry for every exported Swift function.
private let enterSwift: crescent_swift_function = { state, context in
    // Invariant: the trampoline only passes contexts created by makeFunction, and both are non-nil.
    guard let state, let context else { return 0 }
    let stack = LuaStack(state)
    return Unmanaged<LuaFunctionBox>.fromOpaque(context)._withUnsafeGuaranteedRef { box in
        do {
            return try box.body(stack).status
        } catch let error as LuaRaise {
            stack.push(error.message)
        } catch let error as any LuaPushableError {
            error.push(onto: stack)
            return CRESCENT_RERAISE
        } catch {
            stack.push(String(describing: error))
        }
        return CRESCENT_RAISE
    }
}

extension LuaStack {
    /// True when the running code may yield (it runs in a coroutine, not across a C call boundary).
    @inlinable public var isYieldable: Bool { crescent_yieldable(state) != 0 }

    /// Reads argument `position` as an integer, or throws Lua's own wording for a bad argument.
    @inlinable
    public func checkInteger(_ position: Int32, function: StaticString) throws(LuaRaise) -> Int64 {
        if let value = integer(at: position) { return value }
        if type(at: position) == .number {
            throw .badArgument(Int(position), to: "\(function)", "number has no integer representation")
        }
        throw argumentError(position, function: function, expected: "number")
    }

    /// Reads argument `position` as a number, or throws Lua's own wording for a bad argument.
    @inlinable
    public func checkNumber(_ position: Int32, function: StaticString) throws(LuaRaise) -> Double {
        if let value = number(at: position) { return value }
        throw argumentError(position, function: function, expected: "number")
    }

    /// Reads argument `position` as a string, or throws Lua's own wording for a bad argument.
    public func checkString(_ position: Int32, function: StaticString) throws(LuaRaise) -> String {
        if let value = text(at: position) { return value }
        throw argumentError(position, function: function, expected: "string")
    }

    /// Checks that argument `position` is a function.
    public func checkFunction(_ position: Int32, function: StaticString) throws(LuaRaise) {
        if type(at: position) != .function { throw argumentError(position, function: function, expected: "function") }
    }

    /// `bad argument #2 to 'f' (number expected, got string)`; for `timer:after(1, f)`, where
    /// the module came as argument #1, with how to call it.
    public func argumentError(_ position: Int32, function: StaticString, expected: String) -> LuaRaise {
        let got = type(at: position) == .none ? "no value" : typeName(at: position)
        let name = "\(function)"
        let slip = position == 1 && isModuleSlip(function: name) ? ": call it with '.', as \(name)(...), not ':'" : ""
        return .badArgument(Int(position), to: name, "\(expected) expected, got \(got)\(slip)")
    }

    /// Whether argument #1 is the global module `function` belongs to (`timer` for
    /// `timer.after`): the call was written with `:` for `.`. Reads the global raw (no
    /// environment's `__index` runs).
    public func isModuleSlip(function: String) -> Bool {
        guard type(at: 1) == .table, let dot = function.firstIndex(of: ".") else { return false }
        pushGlobals()                                                // ... globals
        _ = rawGet(-1, String(function[..<dot]))                     // ... globals module
        defer { pop(2) }                                             // ...
        return rawEqual(1, -1)
    }
}

extension LuaVM {
    /// Pushes a Lua function that runs `body`. The closure lives as long as the VM; create
    /// functions once (at setup, per type) rather than per call.
    public func pushFunction(_ body: @escaping LuaFunctionBody) {
        let box = LuaFunctionBox(body)
        functionBoxes.append(box)
        crescent_push_function(state, enterSwift, Unmanaged.passUnretained(box).toOpaque())
    }

    /// Sets global `name` to a Swift function.
    public func register(_ name: String, _ body: @escaping LuaFunctionBody) {
        pushFunction(body)
        setGlobal(name)
    }

    /// Sets field `name` of the table on top to a Swift function.
    public func register(field name: String, _ body: @escaping LuaFunctionBody) {
        pushFunction(body)
        stack.rawSet(-2, name)
    }
}
