public import CLua

/// The C function Lua calls before each new line it runs, while a line hook is set
/// (``LuaVM/setLineHook(_:)``). It takes no context: what it counts into is a static.
public typealias LuaLineHook = @convention(c) (OpaquePointer?, UnsafeMutablePointer<lua_Debug>?) -> Void

/// One line event, read in the hook without a copy.
///
/// ```swift
/// vm.setLineHook { state, record in
///     guard let event = LuaLineEvent(state, record), let source = event.source() else { return }
///     count(source, event.line)
/// }
/// ```
public struct LuaLineEvent {
    @usableFromInline let state: OpaquePointer
    @usableFromInline let record: UnsafeMutablePointer<lua_Debug>

    /// The event a hook was called with; nil when Lua passed no state or record.
    @inlinable public init?(_ state: OpaquePointer?, _ record: UnsafeMutablePointer<lua_Debug>?) {
        guard let state, let record else { return nil }
        self.state = state
        self.record = record
    }

    /// The line about to run.
    @inlinable public var line: Int { Int(record.pointee.currentline) }

    /// The running chunk's source name (`@path` for a file), as Lua keeps it: the same pointer
    /// for every line of a chunk while its function's prototype lives, so it can key a cache.
    @inlinable public func source() -> UnsafePointer<CChar>? {
        guard lua_getinfo(state, "S", record) != 0 else { return nil }
        return record.pointee.source
    }
}

extension LuaVM {
    /// `LUA_MASKLINE` (`1 << LUA_HOOKLINE`), spelled out: the header's macro is an expression.
    @usableFromInline static let lineMask: Int32 = 1 << 2

    /// Sets `hook` as the main thread's line hook; the coroutines made after take it from there
    /// (Lua 5.4 gives a new thread its creator's hook). The interrupt shim saves and restores it
    /// around its own.
    public func setLineHook(_ hook: LuaLineHook) {
        lineHook = hook
        lua_sethook(state, hook, Self.lineMask, 0)
    }
}
