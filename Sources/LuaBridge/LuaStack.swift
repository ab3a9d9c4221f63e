public import CLua

/// The Lua types, as `lua_type` reports them.
public enum LuaType: Int32, Sendable {
    case none = -1, `nil` = 0, boolean, lightUserdata, number, string, table, function, userdata, thread
}

/// A view of one Lua stack: the main thread's, a coroutine's, or the frame of a call into Swift.
///
/// Every operation here is raw (no metamethods, never raises) or goes through a protected helper of
/// the shim. It is a plain pointer wrapper: cheap to create for every call and never stored.
public struct LuaStack {
    public let state: OpaquePointer

    @inlinable public init(_ state: OpaquePointer) { self.state = state }

    // MARK: Size

    /// The number of values on the stack (in a call: the number of arguments).
    @inlinable public var top: Int32 { lua_gettop(state) }
    @inlinable public func setTop(_ index: Int32) { lua_settop(state, index) }
    @inlinable public func pop(_ count: Int32 = 1) { lua_settop(state, -count - 1) }
    @inlinable public func absolute(_ index: Int32) -> Int32 { lua_absindex(state, index) }
    /// Makes room for `count` pushes; false when the stack cannot grow (never raises).
    @inlinable public func ensure(_ count: Int32) -> Bool { crescent_checkstack(state, count) != 0 }

    // MARK: Reading

    @inlinable public func type(at index: Int32) -> LuaType { LuaType(rawValue: lua_type(state, index)) ?? .none }
    @inlinable public func isNoneOrNil(_ index: Int32) -> Bool { lua_type(state, index) <= 0 }

    /// The integer at `index` if it is a number with an exact integer value (strings are not converted).
    @inlinable public func integer(at index: Int32) -> Int64? {
        guard lua_type(state, index) == LUA_TNUMBER else { return nil }
        var isInteger: Int32 = 0
        let value = crescent_tointegerx(state, index, &isInteger)
        return isInteger != 0 ? Int64(value) : nil
    }

    /// The number at `index` (strings are not converted).
    @inlinable public func number(at index: Int32) -> Double? {
        guard lua_type(state, index) == LUA_TNUMBER else { return nil }
        return crescent_tonumberx(state, index, nil)
    }

    @inlinable public func isInteger(at index: Int32) -> Bool { lua_isinteger(state, index) != 0 }
    @inlinable public func boolean(at index: Int32) -> Bool { lua_toboolean(state, index) != 0 }

    /// The string at `index` as bytes (numbers are not converted).
    public func string(at index: Int32) -> LuaString? {
        guard lua_type(state, index) == LUA_TSTRING else { return nil }
        var length = 0
        guard let pointer = lua_tolstring(state, index, &length) else { return nil }
        return LuaString(bytes: Array(UnsafeRawBufferPointer(start: pointer, count: length)))
    }

    /// The string at `index` decoded as UTF-8 (invalid bytes replaced).
    /// Where the function `level` frames up the call stack is (`luaL_where`): `chunk:line: `,
    /// or an empty string where Lua knows no line (a C function). Messages that point at the
    /// user's line start with it.
    public func place(level: Int32) -> String {
        luaL_where(state, level)
        defer { pop() }
        return text(at: -1) ?? ""
    }

    public func text(at index: Int32) -> String? {
        guard lua_type(state, index) == LUA_TSTRING else { return nil }
        var length = 0
        guard let pointer = lua_tolstring(state, index, &length) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    }

    /// Lua's name for the type at `index`, using the metatable's `__name` for userdata.
    public func typeName(at index: Int32) -> String {
        if lua_type(state, index) == LUA_TUSERDATA, lua_getmetatable(state, index) != 0 {
            defer { lua_settop(state, -2) }
            if lua_getfield(state, -1, "__name") == LUA_TSTRING, let name = text(at: -1) {
                lua_settop(state, -2)
                return name
            }
            lua_settop(state, -2)
        }
        return String(cString: lua_typename(state, lua_type(state, index)))
    }

    // MARK: Pushing

    @inlinable public func pushNil() { lua_pushnil(state) }
    @inlinable public func push(_ value: Bool) { lua_pushboolean(state, value ? 1 : 0) }
    @inlinable public func push(_ value: Int64) { lua_pushinteger(state, lua_Integer(value)) }
    @inlinable public func push(_ value: Int) { lua_pushinteger(state, lua_Integer(value)) }
    @inlinable public func push(_ value: Double) { lua_pushnumber(state, value) }
    public func push(_ value: String) {
        var value = value
        value.withUTF8 { bytes in _ = lua_pushlstring(state, bytes.baseAddress, bytes.count) }
    }
    public func push(_ value: LuaString) {
        value.bytes.withUnsafeBufferPointer { bytes in
            _ = lua_pushlstring(state, UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self), bytes.count)
        }
    }
    /// Pushes `bytes` as a Lua string (copied by Lua; need not be UTF-8).
    @inlinable public func push(bytes: UnsafeRawBufferPointer) {
        _ = lua_pushlstring(state, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
    }
    @inlinable public func pushValue(at index: Int32) { lua_pushvalue(state, index) }
    @inlinable public func pushGlobals() { crescent_pushglobaltable(state) }
    @inlinable public func newTable(arrayCount: Int32 = 0, fieldCount: Int32 = 0) {
        lua_createtable(state, arrayCount, fieldCount)
    }

    // MARK: Raw table access (no metamethods, never raises except out of memory)

    /// Pushes `t[key]` without metamethods; returns the value's type.
    @discardableResult
    public func rawGet(_ table: Int32, _ key: String) -> LuaType {
        let table = absolute(table)
        push(key)
        return LuaType(rawValue: lua_rawget(state, table)) ?? .none
    }
    /// `t[key] = top` without metamethods; pops the value.
    public func rawSet(_ table: Int32, _ key: String) {
        let table = absolute(table)
        push(key)
        lua_rotate(state, -2, 1)
        lua_rawset(state, table)
    }
    @discardableResult
    @inlinable public func rawGet(_ table: Int32, index: Int64) -> LuaType {
        LuaType(rawValue: lua_rawgeti(state, table, lua_Integer(index))) ?? .none
    }
    /// `t[index] = top` without metamethods; pops the value.
    @inlinable public func rawSet(_ table: Int32, index: Int64) { lua_rawseti(state, table, lua_Integer(index)) }
    @inlinable public func rawLength(_ index: Int32) -> Int { Int(lua_rawlen(state, index)) }

    // MARK: Protected operations (may run metamethods; errors come back as LuaError)

    /// `tostring(v)` with `__tostring` and `__name`, never raising.
    public func describe(at index: Int32) -> String {
        guard ensure(3) else { return "?" }
        if crescent_ptostring(state, index) == LUA_OK, let text = text(at: -1) {
            pop()
            return text
        }
        pop()
        return "<\(typeName(at: index)): error in __tostring>"
    }

    /// Pushes `t.name`, running `__index` if needed.
    public func getField(_ table: Int32, _ name: String) throws(LuaError) {
        let status = crescent_pgetfield(state, table, name)
        if status != LUA_OK { throw popError(status) }
    }

    /// Pops the error a protected helper left on top and turns it into a ``LuaError``.
    public func popError(_ status: Int32) -> LuaError {
        let message = type(at: -1) == .string ? (text(at: -1) ?? "") : describe(at: -1)
        pop()
        var kind: LuaError.Kind = status == LUA_ERRSYNTAX ? .syntax : (status == LUA_ERRERR ? .handler : .runtime)
        if status == LUA_ERRMEM || crescent_memory_limit_hit(state) != 0 {
            crescent_clear_memory_limit_hit(state)
            kind = .memory
        }
        switch crescent_interrupt_pending(state) {
        case Int32(CRESCENT_INTERRUPT_NONE): break
        case Int32(CRESCENT_INTERRUPT_TIMEOUT): kind = .timeout
        default: kind = .interrupted
        }
        // Raised by the shim at the next instruction (see the allocator in shim.c), the memory
        // error already names the script's line and the limit, and the handler added the traceback.
        if kind == .memory, !message.contains("not enough memory: the memory limit of") {
            let limit = crescent_memory_limit(state)
            let mib = limit / (1024 * 1024)
            let setting = crescent_memory_limit_setting(state).map { String(cString: $0) } ?? "--memory-limit"
            return LuaError(.memory, limit > 0 ? "not enough memory: the memory limit of \(mib) MiB was reached (raise it with \(setting))" : message)
        }
        return LuaError(kind, message)
    }
}
