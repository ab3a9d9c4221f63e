import CLua
import LuaBridge
import Model

/// Lua values read as model values: the one conversion every path from Lua takes (service
/// arguments, view fields, remote answers, events), under the JSON rule.
extension ModelBinding {
    /// How deep tables may nest in a value converted from Lua: JSON's one limit.
    static let maxConversionDepth = Value.jsonMaxDepth

    /// Reads the Lua value at `index` as a model value.
    func value(at index: Int32, in stack: LuaStack) throws(ConversionFailure) -> Value {
        let converted = convertedValue(at: index, in: stack)
        if let failure = converted.failure { throw failure }
        return converted.value
    }

    /// Reads the Lua value at `index` as a model value, with a stand-in where a part has no model
    /// form (nil for a function, a thread or a foreign userdata; an empty table for a table that
    /// cannot be converted: a cycle, mixed or odd keys, a hole, too deep), and the first such part.
    ///
    /// The stand-ins let the caller check the value's declared shape anyway, so it can tell a
    /// wrong type (raised at the call site) from bad contents of a well-typed table.
    ///
    /// A part whose metatable has `__tojson` is what that returns, as `json.encode` writes it:
    /// when one is found, marks.lua's `resolve` makes the value's copy and the copy is converted
    /// (``resolvedValue(at:in:)``).
    func convertedValue(at index: Int32, in stack: LuaStack) -> (value: Value, failure: ConversionFailure?) {
        let converted = convertedValue(at: index, in: stack, findsToJSON: true)
        guard converted.foundToJSON else { return (converted.value, converted.failure) }
        return resolvedValue(at: index, in: stack)
    }

    /// ``convertedValue(at:in:)``, and with `findsToJSON` whether a part has a `__tojson`
    /// metamethod (`json.encode` then lets Lua call them and converts their results).
    func convertedValue(at index: Int32, in stack: LuaStack, findsToJSON: Bool)
        -> (value: Value, failure: ConversionFailure?, foundToJSON: Bool) {
        // The buffers of the last conversion are reused (a conversion runs no Lua, so none
        // starts inside another): a record then allocates nothing but its own value.
        var state = ConversionState()
        swap(&state, &spareConversionState)
        state.findsToJSON = findsToJSON
        defer {
            state.failure = nil
            state.foundToJSON = false
            swap(&state, &spareConversionState)
        }
        let top = stack.top
        let value = convert(stack.absolute(index), stack, depth: 0, &state)
        // Invariant: each step pops what it pushed; this only guards against a miscount.
        stack.setTop(top)
        return (value, state.failure, state.foundToJSON)
    }

    /// What one conversion tracks: the tables being converted (to find cycles), the named fields
    /// gathered so far and the first failure.
    struct ConversionState {
        /// The tables from the root down to the one being converted: a short list (tables nest
        /// at most ``ModelBinding/maxConversionDepth`` deep), so a scan beats hashing per table.
        var visiting: [UnsafeRawPointer] = []
        /// The named fields of the tables being converted, each table's after its parent's: a
        /// table's are copied into its record once, at its right size, and then dropped.
        var named: [Fields.Element] = []
        var failure: ConversionFailure?
        /// Whether to look for `__tojson` metamethods, and whether one was found.
        var findsToJSON = false
        var foundToJSON = false

        /// Records `problem` (when it is the first) and returns `standIn` to put in its place.
        mutating func fail(_ problem: ConversionFailure.Problem, standIn: Value) -> Value {
            if failure == nil { failure = ConversionFailure(problem) }
            return standIn
        }
    }

    /// A table that could not be converted stands in as an empty one (`{}` arrives as an empty
    /// array).
    private static let tableStandIn = Value.array([])

    private func convert(_ index: Int32, _ stack: LuaStack, depth: Int, _ state: inout ConversionState) -> Value {
        switch stack.type(at: index) {
        case .none, .nil: return .null
        case .boolean: return .bool(stack.boolean(at: index))
        case .number:
            if lua_isinteger(stack.state, index) != 0 { return .integer(Int64(crescent_tointegerx(stack.state, index, nil))) }
            return .number(crescent_tonumberx(stack.state, index, nil))
        case .string: return stringValue(at: index, in: stack)
        case .userdata:
            if let box = anyObjectBox(at: index, in: stack) { return .handle(box.handle) }
            if state.findsToJSON, hasToJSON(at: index, in: stack) {
                state.foundToJSON = true
                return .null
            }
            return state.fail(.unsupported("a \(stack.typeName(at: index))"), standIn: .null)
        case .function, .thread, .lightUserdata:
            return state.fail(.unsupported("a \(stack.typeName(at: index))"), standIn: .null)
        case .table:
            guard depth < Self.maxConversionDepth, stack.ensure(4) else { return state.fail(.tooDeep, standIn: Self.tableStandIn) }
            guard let identity = lua_topointer(stack.state, index) else { return .null }
            // Most tables have no metatable: then they are neither json.null, nor a data model,
            // nor shaped by json.array/json.object, and none of those checks runs.
            let hasMetatable = lua_getmetatable(stack.state, index) != 0
            if hasMetatable { stack.pop() }
            if hasMetatable, isJSONNull(at: index, in: stack) { return .null }
            if hasMetatable, state.findsToJSON, hasToJSON(at: index, in: stack) {
                state.foundToJSON = true
                return .null
            }
            guard !state.visiting.contains(identity) else { return state.fail(.cycle, standIn: Self.tableStandIn) }
            state.visiting.append(identity)
            defer { state.visiting.removeLast() }
            guard hasMetatable else { return convertTable(index, stack, depth: depth, hasMetatable: false, &state) }
            let typeName = Self.modelFields(at: index, in: stack)
            // json.array/json.object's marks are data's own shape, not behaviour: they cross.
            if refusesMetatables, typeName == nil, !hasJSONMark(at: index, in: stack) {
                return state.fail(.unsupported("a table with a metatable"), standIn: Self.tableStandIn)
            }
            if refusesProxies, typeName == nil, isProxy(at: index, in: stack) {
                return state.fail(.proxy, standIn: Self.tableStandIn)
            }
            if let typeName {
                crescent_push_model_fields(stack.state, index)                  // ... fields
                let fields = convert(stack.absolute(-1), stack, depth: depth + 1, &state)
                stack.pop()
                guard case .object(let values) = fields else { return .model(DataModel(typeName, [:])) }
                if let schema = declaredSchemas[typeName], values.keys.allSatisfy({ schema.position(of: $0) != nil }) {
                    return .model(DataModel(schema, schema.names.map { values[$0] ?? .null }))
                }
                return .model(DataModel(typeName, values))
            }
            return convertTable(index, stack, depth: depth, hasMetatable: true, &state)
        }
    }

    /// A Lua string as text when it is valid UTF-8, else as its bytes unchanged (a binary HTTP
    /// body must reach the service byte for byte).
    private func stringValue(at index: Int32, in stack: LuaStack) -> Value {
        var length = 0
        guard let pointer = lua_tolstring(stack.state, index, &length) else { return .string("") }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
        if let text = Self.text(bytes) { return .string(text) }
        return .bytes(Array(bytes))
    }

    /// `bytes` as a String when they are valid UTF-8.
    static func text(_ bytes: UnsafeRawBufferPointer) -> String? {
        decoded(bytes)?.text
    }

    /// `bytes` as a String when they are valid UTF-8, and whether they are ASCII. ASCII, the
    /// common case, is checked a word at a time and decoded without validation:
    /// `String(validating:)` looks up generic metadata on every call, which showed as a tenth of
    /// a record's conversion.
    static func decoded(_ bytes: UnsafeRawBufferPointer) -> (text: String, isASCII: Bool)? {
        guard isASCII(bytes) else { return String(validating: bytes, as: UTF8.self).map { ($0, false) } }
        return (String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self), true)
    }

    /// True when every byte is below 0x80, checked a word at a time.
    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var offset = 0
        while offset + 8 <= count {
            if bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            offset += 8
        }
        while offset < count {
            if bytes[offset] & 0x80 != 0 { return false }
            offset += 1
        }
        return true
    }

    /// True when the table at `index` is `json.null`.
    private func isJSONNull(at index: Int32, in stack: LuaStack) -> Bool {
        tables.jsonMarks.null.push(onto: stack)
        defer { stack.pop() }
        return lua_rawequal(stack.state, index, -1) != 0
    }

    /// True when the metatable of the value at `index` has a `__tojson` field (read raw).
    private func hasToJSON(at index: Int32, in stack: LuaStack) -> Bool {
        guard lua_getmetatable(stack.state, index) != 0 else { return false }
        defer { stack.pop(2) }
        return stack.rawGet(-1, "__tojson") != .nil
    }

    /// True when the table at `index` has no entries of its own and its metatable an `__index`
    /// (read raw, so no Lua runs): what Lua reads from it comes from `__index`, which a conversion
    /// does not call (it may raise, and Swift never raises a Lua error).
    private func isProxy(at index: Int32, in stack: LuaStack) -> Bool {
        guard lua_getmetatable(stack.state, index) != 0 else { return false }
        let hasIndex = stack.rawGet(-1, "__index") != .nil
        stack.pop(2)
        guard hasIndex else { return false }
        stack.pushNil()
        guard lua_next(stack.state, index) != 0 else { return true }
        stack.pop(2)
        return false
    }

    /// True when the table at `index` has as metatable the mark json.array or json.object gives.
    private func hasJSONMark(at index: Int32, in stack: LuaStack) -> Bool {
        guard lua_getmetatable(stack.state, index) != 0 else { return false }
        defer { stack.pop() }
        for mark in [tables.jsonMarks.array, tables.jsonMarks.object, tables.recordListMark] {
            mark.push(onto: stack)
            defer { stack.pop() }
            if lua_rawequal(stack.state, -1, -2) != 0 { return true }
        }
        return false
    }

    /// The `__jsontype` its metatable gives the table at `index` (`json.object`, `json.array`,
    /// decoded JSON), read raw; nil when it has none.
    private func jsonShape(at index: Int32, in stack: LuaStack) -> String? {
        guard lua_getmetatable(stack.state, index) != 0 else { return nil }
        defer { stack.pop(2) }
        return stack.rawGet(-1, "__jsontype") == .string ? stack.text(at: -1) : nil
    }

    /// One pass of `lua_next`. Array items arrive in order from the table's array part and are
    /// appended as they come; only positions that arrive out of order (from the hash part) wait
    /// in a dictionary until their turn.
    private func convertTable(_ index: Int32, _ stack: LuaStack, depth: Int, hasMetatable: Bool,
                              _ state: inout ConversionState) -> Value {
        var items: [Value] = []
        var outOfOrder: [Int64: Value] = [:]
        let namedStart = state.named.count
        // One at a time: `removeLast(_:)` goes through a generic range replacement that cost
        // more than a record's eight removals.
        defer { while state.named.count > namedStart { state.named.removeLast() } }
        var oddKey: String?
        var namesAreASCII = true
        let length = stack.rawLength(index)
        if length > 0 { items.reserveCapacity(length) }
        stack.pushNil()
        while lua_next(stack.state, index) != 0 {                        // ... key value
            let failedBefore = state.failure != nil
            switch lua_type(stack.state, -2) {
            case LUA_TSTRING:
                guard let (key, isASCII) = fieldNames.name(at: -2, in: stack) else {
                    stack.pop(2)
                    return state.fail(.binaryKey, standIn: Self.tableStandIn)
                }
                namesAreASCII = namesAreASCII && isASCII
                let item = convert(stack.absolute(-1), stack, depth: depth + 1, &state)
                state.named.append((key, item))
                if !failedBefore { state.failure?.within(.field(key)) }
            case LUA_TNUMBER where lua_isinteger(stack.state, -2) != 0:
                let key = Int64(crescent_tointegerx(stack.state, -2, nil))
                let item = convert(stack.absolute(-1), stack, depth: depth + 1, &state)
                if key == Int64(items.count) + 1 { items.append(item) } else { outOfOrder[key] = item }
                if !failedBefore { state.failure?.within(.index(key)) }
            default:
                oddKey = oddKey ?? stack.typeName(at: -2)
            }
            stack.pop()                                                     // ... key
        }
        if let oddKey { return state.fail(.key(oddKey), standIn: Self.tableStandIn) }
        let hasPositions = !items.isEmpty || !outOfOrder.isEmpty
        let hasNames = state.named.count > namedStart
        if hasPositions && hasNames { return state.fail(.mixedKeys, standIn: Self.tableStandIn) }
        let shape = hasMetatable ? jsonShape(at: index, in: stack) : nil
        if let shape {
            // A mark the contents contradict would be ignored, silently: it is refused instead.
            switch shape {
            case "object" where hasPositions: return state.fail(.markedShape(shape, found: "array items"), standIn: Self.tableStandIn)
            case "array" where hasNames: return state.fail(.markedShape(shape, found: "named fields"), standIn: Self.tableStandIn)
            case "object", "array": break
            default: return state.fail(.unknownShape(shape), standIn: Self.tableStandIn)
            }
        }
        if hasNames || (!hasPositions && shape == "object") {
            // Distinct ASCII names are distinct Swift strings: the record is made as they came,
            // with nothing hashed or compared. Distinct Lua keys Swift deems equal (one text in
            // two Unicode normal forms) are one field.
            let named = Array(state.named[namedStart...])
            return .object(namesAreASCII ? Fields(distinctFields: named) : Fields(fields: named))
        }
        while !outOfOrder.isEmpty, let item = outOfOrder.removeValue(forKey: Int64(items.count) + 1) {
            items.append(item)
        }
        // A position left over lies past a missing one: the first gap is the next position.
        if !outOfOrder.isEmpty { return state.fail(.hole(Int64(items.count) + 1), standIn: Self.tableStandIn) }
        return .array(items)
    }
}
