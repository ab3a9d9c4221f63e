public import CLua

/// The stack operations the host's code needs beyond reading and pushing values, each named for
/// what it does, so that no Lua C API call is made outside the bridge (LuaBridge and the
/// binding).
///
/// Like the rest of ``LuaStack``, each is raw (no metamethods, and it raises only when Lua is
/// out of memory, as a push does) or protected (it runs Lua code and reports an error as `false`
/// with the error value on top, never raising it).
extension LuaStack {
    // MARK: Rearranging

    /// Moves the top value to `index`, shifting the values from there up (`lua_insert`).
    @inlinable public func insert(at index: Int32) { crescent_insert(state, index) }
    /// Removes the value at `index`, shifting the values above it down (`lua_remove`).
    @inlinable public func remove(at index: Int32) { crescent_remove(state, index) }
    /// Pops the top value into `index`, replacing the value there (`lua_replace`).
    @inlinable public func replace(at index: Int32) { crescent_replace(state, index) }
    /// Pops the top `count` values and pushes them, in order, onto `other`, a stack of the same
    /// VM (the main stack and a coroutine's, `lua_xmove`).
    @inlinable public func move(_ count: Int32, to other: LuaStack) { lua_xmove(state, other.state, count) }

    // MARK: Raw reads

    /// Pops the key on top and pushes `t[key]` of the table at `table` without metamethods;
    /// returns the value's type.
    @discardableResult
    @inlinable public func rawGet(_ table: Int32) -> LuaType {
        LuaType(rawValue: lua_rawget(state, table)) ?? .none
    }

    /// True when the values at `first` and `second` are the same Lua value (no `__eq`).
    @inlinable public func rawEqual(_ first: Int32, _ second: Int32) -> Bool { lua_rawequal(state, first, second) != 0 }

    /// One step of a traversal of the table at `table` (`lua_next`, no metamethods): pops the key
    /// on top (start with nil) and pushes the next key and its value, or pushes nothing and
    /// returns false after the last. Between steps, leave the key as it was (reading a string key
    /// with ``text(at:)`` is fine; converting a number key in place is not) and add no new keys.
    ///
    /// ```swift
    /// stack.pushNil()                                  // t nil
    /// while stack.next(in: table) {                    // t key value
    ///     stack.pop()                                  // t key
    /// }
    /// ```
    @inlinable public func next(in table: Int32) -> Bool { lua_next(state, table) != 0 }

    /// True for a function written in C or Swift (it has no Lua line to point at).
    @inlinable public func isCFunction(at index: Int32) -> Bool { lua_iscfunction(state, index) != 0 }

    /// The bytes of the string at `index`, without a copy: valid while the value stays on the
    /// stack. A number there is turned into its string in place (`lua_tolstring`); nil for
    /// every other type.
    @inlinable public func bytes(at index: Int32) -> UnsafeRawBufferPointer? {
        var length = 0
        guard let pointer = lua_tolstring(state, index, &length) else { return nil }
        return UnsafeRawBufferPointer(start: pointer, count: length)
    }

    // MARK: Raw writes

    /// Pops the table on top and makes it the metatable of the value at `index`.
    @inlinable public func setMetatable(_ index: Int32) { _ = lua_setmetatable(state, index) }

    /// Replaces the top `count` values, which must be strings or numbers, by their concatenation
    /// (values of other types would run `__concat`).
    @inlinable public func concatenate(_ count: Int32) { lua_concat(state, count) }

    /// Pops the function on top and makes it the one the shim's message handlers word error
    /// values with (`CRESCENT_ERROR_TEXT` in the registry): given the raised value, it returns
    /// the message to show.
    @inlinable public func setErrorTextFunction() { lua_setfield(state, crescent_registryindex(), CRESCENT_ERROR_TEXT) }

    /// Pushes the value in registry slot `id` (a slot from ``LuaVM/refID(from:)``).
    @inlinable public func push(refID id: Int32) { _ = crescent_getref(state, id) }

    /// Pushes the shim's C function that makes a Lua file handle of an open descriptor:
    /// `(descriptor, mode[, pid])` answers as `io.open` does (`file`, or nil, the message and
    /// errno); with `pid`, closing the handle waits for that program as `io.popen`'s close does.
    @inlinable public func pushFileFromDescriptorFunction() { crescent_pushcfunction(state, crescent_file_from_descriptor) }

    /// Pops a table of chunks by name (`{ text, chunk name }`) and the mode to load them in
    /// (`"b"`, `"t"`), and pushes the shim's `load(name[, env])`, which loads one of those chunks
    /// and no other (scripts' `load` reads text only), answering as `load` does. Loading runs in
    /// C: a chunk loaded when no memory is left is a Lua error, with no Swift on the way.
    @inlinable public func pushNamedChunkLoader() { crescent_push_named_chunk_loader(state) }

    /// Sets field `execute` of the `os` table under the top to Lua's own `os.execute`, made to
    /// also call the function on top with the number of the signal that ended its program;
    /// pops that function.
    @inlinable public func setExecuteReportingSignals() { crescent_install_execute(state) }

    // MARK: Protected (may run Lua code; an error comes back as false, its value on top)

    /// Pushes `tostring` of the value at `index` (with `__tostring` and `__name`); false when
    /// that raised, with the error value pushed instead.
    @inlinable public func pushDescription(at index: Int32) -> Bool { crescent_ptostring(state, index) == LUA_OK }

    /// Pops the key on top and pushes `v[key]` of the value at `index`, running `__index`; false
    /// when that raised, with the error value pushed instead.
    @inlinable public func pushIndexed(_ index: Int32) -> Bool { crescent_pgettable(state, index) == LUA_OK }

    /// Calls the function below the top `arguments` values, keeping all its results; false when
    /// it raised, with the error value on top exactly as raised (no traceback added), for the
    /// caller's Lua side to raise again.
    @inlinable public func callKeepingError(arguments: Int32) -> Bool {
        crescent_pcall_raw(state, arguments, LUA_MULTRET) == LUA_OK
    }

    // MARK: Functions

    /// The identity of upvalue `number` of the function at `function` (`lua_upvalueid`): two
    /// functions share that upvalue when the identities are equal. Nil when there is none.
    @inlinable public func upvalueIdentity(of function: Int32, _ number: Int32) -> UnsafeMutableRawPointer? {
        lua_upvalueid(state, function, number)
    }

    /// Pushes the value of upvalue `number` of the function at `function`; false (nothing pushed)
    /// when the function has no such upvalue.
    @inlinable public func pushUpvalue(of function: Int32, _ number: Int32) -> Bool {
        lua_getupvalue(state, function, number) != nil
    }

    /// `file:line: ` (as ``place(level:)`` writes it) of the innermost of the `levels` frames
    /// above the running function that runs a chunk loaded from a file (a source named `@…`):
    /// a script's or a spec's line, past the frames of C functions and of chunks loaded from
    /// strings (the host's prelude). Nil when none of them does.
    public func innermostFilePlace(levels: Int32) -> String? {
        var record = lua_Debug()
        for level in 1...max(1, levels) {
            guard lua_getstack(state, level, &record) != 0 else { return nil }
            guard lua_getinfo(state, "Sl", &record) != 0, record.currentline > 0,
                  let source = record.source, source.pointee == CChar(bitPattern: UInt8(ascii: "@")) else { continue }
            return place(level: level)
        }
        return nil
    }

    /// Whether one of the `levels` frames above the running function runs the chunk named
    /// `source` (`=[crescent controllers_helpers]`): a call that came through it.
    public func hasFrame(source name: String, levels: Int32) -> Bool {
        var record = lua_Debug()
        for level in 1...max(1, levels) {
            guard lua_getstack(state, level, &record) != 0 else { return false }
            guard lua_getinfo(state, "S", &record) != 0, let source = record.source else { continue }
            if String(cString: source) == name { return true }
        }
        return false
    }

    /// Pops the function on top and tells where it was defined: Lua's short name of its chunk
    /// (`spec/x_spec.lua`, `[string "..."]`, `[C]`) and the line its definition starts on.
    public func popDefinition() -> (source: String, line: Int)? {
        var info = lua_Debug()
        guard lua_getinfo(state, ">S", &info) != 0 else { return nil }   // (popped)
        var shortSource = info.short_src
        let size = MemoryLayout.size(ofValue: shortSource)
        let source = withUnsafePointer(to: &shortSource) {
            $0.withMemoryRebound(to: CChar.self, capacity: size) { String(cString: $0) }
        }
        return (source, Int(info.linedefined))
    }
}
