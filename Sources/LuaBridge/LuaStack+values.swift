public import CLua

extension LuaStack {
    /// Pushes a Swift copy of a Lua value (tables become new tables).
    public func push(_ value: LuaValue) {
        switch value {
        case .nil: pushNil()
        case .boolean(let flag): push(flag)
        case .integer(let integer): push(integer)
        case .number(let number): push(number)
        case .string(let string): push(string)
        case .reference(let ref): ref.push(onto: self)
        case .table(let table):
            _ = ensure(3)
            newTable(arrayCount: 0, fieldCount: Int32(clamping: table.count))
            for (key, item) in table {
                push(key)
                push(item)
                lua_rawset(state, -3)
            }
        }
    }

    /// Copies the value at `index` into Swift. Tables are copied deeply with raw access; functions,
    /// userdata and threads come back as references pinned in the registry of `vm`.
    ///
    /// - Throws: ``LuaRaise`` for a table that contains itself or nests deeper than `maxDepth`.
    public func value(at index: Int32, vm: LuaVM, maxDepth: Int = 200) throws(LuaRaise) -> LuaValue {
        var path: Set<UnsafeRawPointer> = []
        let savedTop = top
        do {
            return try copy(absolute(index), vm: vm, depth: maxDepth, path: &path)
        } catch {
            setTop(savedTop)
            throw error
        }
    }

    private func copy(_ index: Int32, vm: LuaVM, depth: Int, path: inout Set<UnsafeRawPointer>) throws(LuaRaise) -> LuaValue {
        switch type(at: index) {
        case .none, .nil: return .nil
        case .boolean: return .boolean(boolean(at: index))
        case .number:
            if let integer = isInteger(at: index) ? integer(at: index) : nil { return .integer(integer) }
            return .number(number(at: index) ?? .nan)
        case .string: return .string(string(at: index) ?? LuaString(bytes: []))
        case .table:
            guard depth > 0 else { throw LuaRaise("table nested too deeply to copy") }
            guard let identity = lua_topointer(state, index) else { return .nil }
            guard path.insert(identity).inserted else { throw LuaRaise("table contains itself (a cycle)") }
            defer { path.remove(identity) }
            guard ensure(4) else { throw LuaRaise("stack overflow while copying a table") }
            var table: [LuaValue: LuaValue] = [:]
            pushNil()
            while lua_next(state, index) != 0 {       // ... key value
                let key = try copy(absolute(-2), vm: vm, depth: depth - 1, path: &path)
                let item = try copy(absolute(-1), vm: vm, depth: depth - 1, path: &path)
                table[key] = item
                pop()                                   // ... key
            }
            return .table(table)
        case .function, .userdata, .thread, .lightUserdata:
            pushValue(at: index)
            return .reference(vm.ref())
        }
    }
}
