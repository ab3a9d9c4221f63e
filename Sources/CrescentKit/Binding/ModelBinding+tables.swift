import CLua
import LuaBridge
import Model

extension ModelBinding {
    /// Builds what every model value shares: data model metamethods, the error metatable, the
    /// documentation table, and the Subscription and Request handle types.
    func installSharedTables() throws(LuaError) {
        let stack = vm.stack
        stack.newTable(fieldCount: 4)
        vm.register(field: "__newindex") { stack in
            let typeName = Self.modelTypeName(at: 1, in: stack)
            throw LuaRaise("cannot set '\(typeName).\(stack.describe(at: 2))': a \(typeName) is read-only (it is a snapshot made by its service)")
        }
        // debug.getmetatable hands these to scripts, which may call them on any value: each checks
        // it was given a data model before reading its metatable.
        vm.register(field: "__pairs") { [unowned self] stack in
            try self.checkModel(stack)
            return Self.pairsOverIndexTable(stack)
        }
        vm.register(field: "__eq") { stack in
            // Proxies of one snapshot share their fields table.
            guard lua_getmetatable(stack.state, 1) != 0, lua_getmetatable(stack.state, 2) != 0 else {
                stack.push(false)
                return .one
            }
            _ = stack.rawGet(-2, "__index")                          // mt1 mt2 fields1
            _ = stack.rawGet(-2, "__index")                          // mt1 mt2 fields1 fields2
            stack.push(lua_rawequal(stack.state, -1, -2) != 0)
            return .one
        }
        vm.register(field: "__tostring") { [unowned self] stack in
            try self.checkModel(stack)
            let typeName = Self.modelTypeName(at: 1, in: stack)
            lua_getmetatable(stack.state, 1)
            _ = lua_getfield(stack.state, -1, "__index")             // mt fields
            var parts: [String] = []
            stack.pushNil()
            while lua_next(stack.state, -2) != 0 {
                if let key = stack.text(at: -2) {
                    let value = stack.type(at: -1) == .string ? "\"\(stack.text(at: -1) ?? "")\"" : stack.describe(at: -1)
                    parts.append("\(key) = \(value)")
                }
                stack.pop()
            }
            stack.push("\(typeName) { \(parts.sorted().joined(separator: ", ")) }")
            return .one
        }
        modelMetamethods = vm.ref()
        stack.newTable()
        modelTemplates = vm.ref()
        try installModelMethods()
        try installJSONMarks()
        crescent_push_change_keys(vm.state)
        changeKeys = vm.refID()
        try installChangeMetamethods()

        vm.pushFunction { stack in
            guard lua_getmetatable(stack.state, 1) != 0, stack.rawGet(-1, "__index") == .table else {
                stack.push(ServiceError.typeName)
                return .one
            }                                                        // mt fields
            func field(_ name: String) -> String {
                defer { stack.pop() }
                return stack.rawGet(-1, name) == .string ? (stack.text(at: -1) ?? "") : ""
            }
            stack.push(field("where") + ServiceError.describe(code: field("code"), message: field("message"),
                                                              service: field("service"), method: field("method")))
            return .one
        }
        errorTostring = vm.ref()

        try vm.run("return setmetatable({}, { __mode = 'k' })", results: 1)
        functionDocs = vm.ref()

        subscriptionType = vm.objectType(
            Subscription.self, name: "Subscription",
            methods: [
                "cancel": { [unowned self] stack in
                    try self.subscriptionType.check(1, in: stack, function: "cancel").cancel()
                    return .none
                },
            ],
            getter: { [unowned self] stack in
                guard let subscription = self.subscriptionType.object(at: 1, in: stack) else { return .none }
                switch stack.text(at: 2) {
                case "active": stack.push(subscription.isActive)
                case "deliveries": stack.push(subscription.deliveries)
                case "errors": stack.push(Int(subscription.errors))
                case "site": stack.push(subscription.site)
                case "target": stack.push(subscription.targetDescription)
                case "owner": stack.push(subscription.ownerName)
                default: stack.pushNil()
                }
                return .one
            },
            metamethods: [
                "__tostring": { [unowned self] stack in
                    guard let subscription = self.subscriptionType.object(at: 1, in: stack) else { return .none }
                    stack.push("Subscription(\(subscription.targetDescription), \(subscription.isActive ? "active" : "cancelled"), \(subscription.site))")
                    return .one
                },
            ]
        )

        requestType = vm.objectType(
            ServiceRequest.self, name: "Request",
            methods: [
                "cancel": { [unowned self] stack in
                    self.cancelByUser(try self.requestType.check(1, in: stack, function: "cancel"))
                    return .none
                },
            ],
            getter: { [unowned self] stack in
                guard let request = self.requestType.object(at: 1, in: stack) else { return .none }
                switch stack.text(at: 2) {
                case "done": stack.push(request.isDone)
                case "method": stack.push("\(request.service).\(request.method)")
                default: stack.pushNil()
                }
                return .one
            },
            metamethods: [
                "__tostring": { [unowned self] stack in
                    guard let request = self.requestType.object(at: 1, in: stack) else { return .none }
                    stack.push("Request(\(request.service).\(request.method), \(request.isDone ? "done" : "pending"))")
                    return .one
                },
            ]
        )
    }

    /// A change table holds `initial`, `coalesced` and `sub`; `object` and `key` come from its
    /// property's prototype. These make `pairs` and `tostring` (and so `inspect`) show all five.
    private func installChangeMetamethods() throws(LuaError) {
        try vm.run("""
            local next, getmetatable, rawget, tostring, concat, sort = next, getmetatable, rawget, tostring, table.concat, table.sort
            local function fields(change)
              local all = {}
              for k, v in next, change do all[k] = v end
              local shared = rawget(getmetatable(change), "__index")
              for k, v in next, shared do all[k] = v end
              return all
            end
            local metamethods = {}
            function metamethods.__pairs(change) return next, fields(change), nil end
            function metamethods.__tostring(change)
              local parts = {}
              for k, v in next, fields(change) do
                parts[#parts + 1] = k .. " = " .. (type(v) == "string" and ("%q"):format(v) or tostring(v))
              end
              sort(parts)
              return "change { " .. concat(parts, ", ") .. " }"
            end
            return metamethods
            """, name: "=[crescent change]", results: 1)
        changeMetamethods = vm.ref()
    }

    /// Loads the methods of data model types (`response:json()`, from the prelude's models.lua)
    /// and keeps, per type name, the metatable a model's fields table gets: its `__index` is the
    /// type's methods, so a name that is not a field finds the method, while `pairs`, `#` and
    /// conversion back to a value still see only the fields (they read the fields table raw).
    private func installModelMethods() throws(LuaError) {
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
    }

    /// Keeps `json.null` and the shape metatables of `json.array` and `json.object`, taken before
    /// any script could replace the module.
    private func installJSONMarks() throws(LuaError) {
        try vm.load(Array("""
            local json = ...
            return json.null, getmetatable(json.array({})), getmetatable(json.object({}))
            """.utf8), name: "=[crescent json marks]")
        _ = vm.getGlobal("json")
        try vm.call(arguments: 1, results: 3)
        jsonObject = vm.ref()
        jsonArray = vm.ref()
        jsonNull = vm.ref()
    }

    /// Throws unless argument 1 is a data model proxy.
    private func checkModel(_ stack: LuaStack) throws(LuaRaise) {
        guard modelFields(at: 1, in: stack) != nil else { throw stack.argumentError(1, function: "data model metamethod", expected: "data model") }
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

    /// The type name of the data model whose proxy is at `index`.
    static func modelTypeName(at index: Int32, in stack: LuaStack) -> String {
        guard lua_getmetatable(stack.state, index) != 0 else { return "table" }
        defer { stack.pop(2) }
        return stack.rawGet(-1, "__name") == .string ? (stack.text(at: -1) ?? "record") : "record"
    }

    /// Records `text` as the documentation of the function on top of the stack (left in place).
    func document(functionOnTop text: String) {
        let stack = vm.stack
        functionDocs.push(onto: stack)                               // f docs
        stack.pushValue(at: -2)
        stack.push(text)
        lua_rawset(stack.state, -3)
        stack.pop()
    }
}
