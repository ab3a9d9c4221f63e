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
            if items.isEmpty {
                markShape(tables.jsonMarks.array, stack)
            } else if case .model = items[0] {
                markShape(tables.recordListMark, stack)
            }
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
                markShape(models.count == 0 ? tables.jsonMarks.array : tables.recordListMark, stack)
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
        declaredSchemas[schema.typeName] = schema
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
}

/// A unique address marking data model metatables (a light userdata key, never dereferenced): the
/// C shim's, whose cached-property `__index` recognizes data models by it. Immutable after
/// initialisation, so sharing it between threads is safe.
nonisolated(unsafe) let modelMarker: UnsafeRawPointer? = crescent_model_marker()
