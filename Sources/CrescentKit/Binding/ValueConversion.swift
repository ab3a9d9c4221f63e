import CLua
import LuaBridge
import Model

extension ModelBinding {
    // MARK: Model values to Lua

    /// Pushes a model value: JSON-shaped data as plain tables, data models as read-only tables,
    /// objects as their (one per object) userdata.
    func push(_ value: Value, onto stack: LuaStack) {
        _ = stack.ensure(4)
        var interned: InternedStrings?
        push(value, stack, &interned)
    }

    /// Pushes a value `object` hands out: with its null fields as `json.null` when it hands out
    /// JSON data (a store's records), so they read as a remote client sees them.
    func push(_ value: Value, of object: any ModelObject, onto stack: LuaStack) {
        pushesNullFields = object.handsOutJSONData
        defer { pushesNullFields = false }
        push(value, onto: stack)
    }

    /// Pushes `value`, its strings through `interned` while a bulk array is pushed. A scalar
    /// takes the one slot its container (or ``push(_:onto:)``) made room for; a container makes
    /// room for its own.
    private func push(_ value: Value, _ stack: LuaStack, _ interned: inout InternedStrings?) {
        switch value {
        case .null: stack.pushNil()
        case .bool(let flag): stack.push(flag)
        case .integer(let integer): stack.push(integer)
        case .number(let number): stack.push(number)
        case .string(let string):
            if interned?.push(string, onto: stack) == nil { stack.push(string) }
        case .bytes(let bytes): stack.push(LuaString(bytes: bytes))
        case .array(let items):
            _ = stack.ensure(4)
            // A batch's answer (100,000 placemarks) is built with the collector stopped: its tables
            // are all live, and an incremental collection meanwhile would mark them again and
            // again (a third of the build's time).
            let isBulk = items.count >= Self.bulkCount
            let pausesCollector = isBulk && crescent_pause_collector(stack.state) != 0
            // Its strings are made once each (see InternedStrings), in a table under the array.
            let interns = isBulk && interned == nil && InternedStrings.isAvailable
            if interns { interned = InternedStrings(onto: stack) }
            stack.newTable(arrayCount: Int32(clamping: items.count))
            for (index, item) in items.enumerated() {
                // A null item is json.null, as json.decode makes it: nil would leave a hole, and
                // the positions after it would be lost on the way back.
                if item.isNull { tables.jsonMarks.null.push(onto: stack) } else { push(item, stack, &interned) }
                stack.rawSet(-2, index: Int64(index + 1))
            }
            if interns {
                interned = nil
                lua_rotate(stack.state, -2, -1)                          // array strings
                stack.pop()
            }
            if pausesCollector { crescent_resume_collector(stack.state) }
            // An empty table has no shape of its own: `[]` stays an array (json.array's mark).
            if items.isEmpty { markShape(tables.jsonMarks.array, stack) }
        case .object(let fields):
            _ = stack.ensure(4)
            pushFields(fields, stack, &interned)
            // So `{}` and `{ "c": null }` stay objects.
            if fields.values.allSatisfy(\.isNull) { markShape(tables.jsonMarks.object, stack) }
        case .model(let model): pushModel(model, stack, &interned)
        case .packed(let models): pushPacked(models, stack, &interned)
        case .handle(let handle):
            _ = stack.ensure(4)
            pushObject(handle.object, onto: stack)
        }
    }

    /// How many items make an array big enough to build with the collector stopped.
    static let bulkCount = 1000

    /// Gives the table on top the json module's shape metatable `mark`.
    private func markShape(_ mark: LuaRef, _ stack: LuaStack) {
        mark.push(onto: stack)
        lua_setmetatable(stack.state, -2)
    }

    /// A data model is a proxy holding only its fields table, under a key no script can name, so
    /// every assignment reaches its type's shared metatable, which refuses it; reads go through
    /// that metatable's `__index` to the fields (see `crescent_push_model`). A cached property
    /// hands out a fresh proxy per read, and two proxies over the same fields are equal (`__eq`),
    /// as one proxy read twice was.
    private func pushModel(_ model: DataModel, _ stack: LuaStack, _ interned: inout InternedStrings?) {
        _ = stack.ensure(8)
        let slots = self.slots(of: model.schema)
        let state = stack.state
        let values = model.values
        var present: Int32 = 0
        for value in values where !value.isNull { present += 1 }
        stack.newTable(fieldCount: present)                          // fields
        if let keys = slots.keys {
            keys.push(onto: stack)                                   // fields keys
            for (position, value) in values.enumerated() where !value.isNull {
                lua_rawgeti(state, -1, lua_Integer(position + 1))    // fields keys key
                push(value, stack, &interned)                        // fields keys key value
                lua_rawset(state, -4)                                // fields keys
            }
            stack.pop()                                              // fields
        } else {
            for (name, value) in zip(model.schema.names, values) where !value.isNull {
                stack.push(name)                                     // fields key
                push(value, stack, &interned)                        // fields key value
                lua_rawset(state, -3)                                // fields
            }
        }
        if let methods = slots.methods {
            methods.push(onto: stack)                                // fields methodsmt
            lua_setmetatable(state, -2)                              // fields
        }
        crescent_push_model(state, tables.modelTemplates.id, slots.template)  // proxy
    }

    /// Packed models of a shared schema are made in one C call from their buffer (see
    /// `crescent_push_packed_models`), with the collector stopped as for any bulk array: each is a
    /// proxy that reads its fields from the buffer until a script needs its fields table. Other
    /// schemas, or a buffer the C side refuses, are pushed model by model.
    private func pushPacked(_ models: PackedModels, _ stack: LuaStack, _ interned: inout InternedStrings?) {
        _ = stack.ensure(8)
        let slots = self.slots(of: models.schema)
        if let keys = slots.keys {
            let state = stack.state
            let pausesCollector = models.count >= Self.bulkCount && crescent_pause_collector(state) != 0
            defer { if pausesCollector { crescent_resume_collector(state) } }
            stack.push(LuaString(bytes: models.bytes))               // blob
            keys.push(onto: stack)                                   // blob keys
            if let methods = slots.methods { methods.push(onto: stack) } else { stack.pushNil() }
            if crescent_push_packed_models(state, tables.modelTemplates.id, slots.template, models.wrapsEach ? 1 : 0) != 0 {
                if models.count == 0 { markShape(tables.jsonMarks.array, stack) }
                return
            }
        }
        push(.array(models.values), stack, &interned)
    }

    /// What pushing a model of one schema needs: the Lua strings of its field names (for a shared
    /// schema), its template slot and the metatable of its fields table (its type's methods; for
    /// a shared schema, also the check that names a misspelled field).
    struct SchemaSlots {
        /// Held so the schema's identity, the cache key, is never reused.
        let schema: ModelSchema
        /// A table of the field names as Lua strings, by position: a model's keys are pushed with
        /// `lua_rawgeti`, not made from Swift strings and hashed.
        let keys: LuaRef?
        let template: Int32
        let methods: LuaRef?
    }

    /// The slots of `schema`: the last schema pushed is checked first (a batch of placemarks
    /// is one schema), then the shared schemas seen before; a one-off schema is looked up by its
    /// type name and not kept.
    private func slots(of schema: ModelSchema) -> SchemaSlots {
        if let last = lastSchemaSlots, last.schema === schema { return last }
        guard schema.isShared else {
            return SchemaSlots(schema: schema, keys: nil, template: modelTemplate(schema.typeName),
                               methods: modelMethodTables[schema.typeName])
        }
        if let known = sharedSchemaSlots[ObjectIdentifier(schema)] {
            lastSchemaSlots = known
            return known
        }
        let stack = vm.stack
        _ = stack.ensure(3)
        stack.newTable(arrayCount: Int32(clamping: schema.names.count))   // keys
        for (position, name) in schema.names.enumerated() {
            stack.push(name)
            stack.rawSet(-2, index: Int64(position + 1))
        }
        let keys = vm.ref()
        let slots = SchemaSlots(schema: schema, keys: keys, template: modelTemplate(schema.typeName),
                                methods: checkedFieldsMetatable(schema))
        sharedSchemaSlots[ObjectIdentifier(schema)] = slots
        lastSchemaSlots = slots
        return slots
    }

    /// A table of named fields, pushed.
    private func pushFields(_ fields: Fields, _ stack: LuaStack, _ interned: inout InternedStrings?) {
        stack.newTable(fieldCount: Int32(clamping: fields.count))    // t
        guard !fields.isEmpty else { return }
        let table = stack.top
        let names = fieldNames
        names.pushAnchors(onto: stack)                               // t anchors
        let anchors = stack.top
        let nullsKept = pushesNullFields
        for (key, item) in fields {
            names.push(key, onto: stack, anchorsAt: anchors)         // t anchors key
            if nullsKept && item.isNull {
                tables.jsonMarks.null.push(onto: stack)              // t anchors key null
            } else {
                push(item, stack, &interned)                         // t anchors key item
            }
            lua_rawset(stack.state, table)                           // t anchors
        }
        stack.pop()                                                  // t
    }

    /// The slot in `modelTemplates` of the metatable every proxy of data model type `typeName`
    /// shares: the model `__index`, the shared metamethods (the error type's own `__tostring`),
    /// `__name`, `__metatable` and the model marker. Built once per type name (in the one table
    /// `modelTemplates`, so no reference is added per type).
    private func modelTemplate(_ typeName: String) -> Int32 {
        if let known = modelTemplateSlots[typeName] { return known }
        let stack = vm.stack
        _ = stack.ensure(5)
        tables.modelTemplates.push(onto: stack)                      // templates
        stack.newTable(fieldCount: 8)                                // templates template
        crescent_push_model_index(stack.state)
        stack.rawSet(-2, "__index")
        stack.push(typeName)
        stack.rawSet(-2, "__name")
        stack.push(typeName)
        stack.rawSet(-2, "__metatable")
        tables.modelMetamethods.push(onto: stack)                    // template shared
        // No `__len`: fields have names only, so `#` of the empty proxy (0) is already right.
        for name in ["__newindex", "__pairs", "__tostring", "__eq"] {
            stack.rawGet(-1, name)
            stack.rawSet(-3, name)
        }
        stack.pop()                                                  // template
        if typeName == ServiceError.typeName {
            tables.errorTostring.push(onto: stack)                   // template tostring
            stack.rawSet(-2, "__tostring")                           // template
        }
        lua_pushboolean(stack.state, 1)
        lua_rawsetp(stack.state, -2, modelMarker)
        let slot = Int32(modelTemplateSlots.count + 1)
        stack.rawSet(-2, index: Int64(slot))                         // templates
        stack.pop()
        modelTemplateSlots[typeName] = slot
        return slot
    }

    /// The fields table and type name when the value at `index` is a data model proxy.
    static func modelFields(at index: Int32, in stack: LuaStack) -> String? {
        guard stack.type(at: index) == .table, lua_getmetatable(stack.state, index) != 0 else { return nil }
        defer { stack.pop() }
        guard lua_rawgetp(stack.state, -1, modelMarker) == LUA_TBOOLEAN else {
            stack.pop()
            return nil
        }
        stack.pop()
        guard stack.rawGet(-1, "__name") == .string, let name = stack.text(at: -1) else {
            stack.pop()
            return nil
        }
        stack.pop()
        return name
    }

    /// Pushes a service error: its one script shape (``ServiceError/value``), whose `tostring`
    /// reads `geocoder.reverse: invalid_argument: ...`.
    func push(_ error: ServiceError, onto stack: LuaStack) {
        push(error.value, onto: stack)
    }

    // MARK: Lua values to model values

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
            if let typeName {
                crescent_push_model_fields(stack.state, index)                  // ... fields
                let fields = convert(stack.absolute(-1), stack, depth: depth + 1, &state)
                stack.pop()
                guard case .object(let values) = fields else { return .model(DataModel(typeName, [:])) }
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

    /// True when the table at `index` has as metatable the mark json.array or json.object gives.
    private func hasJSONMark(at index: Int32, in stack: LuaStack) -> Bool {
        guard lua_getmetatable(stack.state, index) != 0 else { return false }
        defer { stack.pop() }
        for mark in [tables.jsonMarks.array, tables.jsonMarks.object] {
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

/// A unique address marking data model metatables (a light userdata key, never dereferenced): the
/// C shim's, whose cached-property `__index` recognizes data models by it. Immutable after
/// initialisation, so sharing it between threads is safe.
nonisolated(unsafe) let modelMarker: UnsafeRawPointer? = crescent_model_marker()
