import CLua
import LuaBridge
import Model

extension ModelBinding {
    /// Loads the methods of data model types (`response:json()`, from the prelude's models.lua)
    /// and keeps, per type name, the metatable a model's fields table gets: its `__index` is the
    /// type's methods, so a name that is not a field finds the method, while `pairs`, `#` and
    /// conversion back to a value still see only the fields (they read the fields table raw).
    func installModelMethods() throws(LuaError) {
        let stack = vm.stack
        let module = Prelude.models
        try module.load(into: vm)
        _ = vm.getGlobal("json")
        try vm.call(arguments: 1, results: 1)                         // types
        stack.pushNil()
        while lua_next(stack.state, -2) != 0 {                        // types name methods
            guard stack.type(at: -2) == .string, let typeName = stack.text(at: -2) else {
                stack.pop()
                continue
            }
            stack.newTable(fieldCount: 1)                             // types name methods mt
            stack.pushValue(at: -2)
            stack.rawSet(-2, "__index")
            modelMethodTables[typeName] = vm.ref()                    // types name methods
            stack.pop()                                               // types name
        }
        stack.pop()
        // A model pushed before now was pushed without its type's methods.
        sharedSchemaSlots.removeAll()
        lastSchemaSlots = nil
    }

    /// `__pairs` for read-only proxies whose metatable's `__index` holds the real fields:
    /// iterates those fields with `next`.
    static func pairsOverIndexTable(_ stack: LuaStack) -> LuaReturn {
        lua_getmetatable(stack.state, 1)
        _ = lua_getfield(stack.state, -1, "__index")                 // mt fields
        lua_getglobal(stack.state, "next")
        lua_rotate(stack.state, -2, 1)                                // mt next fields
        stack.pushNil()
        return .values(3)
    }

    /// `__pairs` for data model proxies: iterates their fields through the proxy (the fields table
    /// itself would let a script change what the read-only model reads).
    static func pairsOverModelFields(_ stack: LuaStack) -> LuaReturn {
        stack.setTop(1)
        crescent_push_model_next(stack.state)                       // proxy next
        stack.pushValue(at: 1)                                       // proxy next proxy
        stack.pushNil()
        return .values(3)
    }

    /// Pushes the table that reads of the value at absolute `index` fall through to: a data
    /// model's fields, else its metatable's `__index` when that is a table (above the metatable).
    /// False when there is none (what was pushed is left for the caller's reset).
    static func pushIndexTable(of index: Int32, in stack: LuaStack) -> Bool {
        if modelFields(at: index, in: stack) != nil { return crescent_push_model_fields(stack.state, index) == LUA_TTABLE }
        guard lua_getmetatable(stack.state, index) != 0 else { return false }
        return stack.rawGet(-1, "__index") == .table
    }

    /// The type name of the data model whose proxy is at `index`.
    static func modelTypeName(at index: Int32, in stack: LuaStack) -> String {
        guard lua_getmetatable(stack.state, index) != 0 else { return "table" }
        defer { stack.pop(2) }
        return stack.rawGet(-1, "__name") == .string ? (stack.text(at: -1) ?? "record") : "record"
    }

    /// Records `text` as the documentation of the function on top of the stack (left in place).
    func document(functionOnTop text: String) {
        let stack = vm.stack
        tables.functionDocs.push(onto: stack)                        // f docs
        stack.pushValue(at: -2)
        stack.push(text)
        lua_rawset(stack.state, -3)
        stack.pop()
    }
}

extension ModelBinding {
    /// The metatable of the fields table of a model of shared `schema`, whose every field name is
    /// declared: a name that is no field (an optional one the model lacks reads nil) finds the
    /// type's method, else raises naming the fields and methods and the closest one
    /// (`p.contry`: "no field 'contry' on placemark (fields: ...; did you mean 'country'?)").
    /// One-off schemas hold only the fields a model has, so their models are not checked.
    func checkedFieldsMetatable(_ schema: ModelSchema) -> LuaRef {
        let stack = vm.stack
        _ = stack.ensure(4)
        let typeName = schema.typeName
        let fields = schema.names
        let declared = Set(fields)
        var methodNames: [String] = []
        let methods = modelMethodTables[typeName]
        if let methods {
            methods.push(onto: stack)                                 // mt
            if stack.rawGet(-1, "__index") == .table {                // mt methods
                stack.pushNil()
                while lua_next(stack.state, -2) != 0 {
                    if let name = stack.text(at: -2) { methodNames.append(name) }
                    stack.pop()
                }
            }
            stack.pop(2)
        }
        methodNames.sort()
        stack.newTable(fieldCount: 1)                                 // mt
        // Called by the proxy's C `__index` (level 1) for the script's read (level 2).
        vm.pushFunction { stack in                                    // fields key
            guard stack.type(at: 2) == .string, let key = stack.text(at: 2) else { return .none }
            if let methods {
                methods.push(onto: stack)                             // fields key methodsmt
                if stack.rawGet(-1, "__index") == .table, stack.rawGet(-1, key) != .nil { return .one }
                stack.setTop(2)
            }
            if declared.contains(key) || key.hasPrefix("__") { return .none }
            throw UndeclaredField.error(key, on: typeName, fields: fields, methods: methodNames, in: stack)
        }
        stack.rawSet(-2, "__index")
        return vm.ref()
    }
}
