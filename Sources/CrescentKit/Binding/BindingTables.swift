import CLua
import LuaBridge
import Model

/// What every data model, change table and handle of one VM shares, made with the VM before the
/// binding exists: the data model metamethods and templates, the error `__tostring`, the change
/// tables' keys and metamethods, the documentation table, and the Subscription and Request types.
///
/// None of it refers to the binding, so the host makes it right after the VM and the binding
/// holds it from its first line to its last. The references stay valid until the VM closes, so a
/// finalizer that runs while it closes still finds them (what it may do then is the binding's
/// business: see ``ModelBinding/checkRunning(_:)``).
struct BindingTables {
    /// Documentation of functions (`help(services.geocoder.reverse)`), weakly keyed by the function.
    let functionDocs: LuaRef
    /// `__newindex`, `__pairs`, `__eq` and `__tostring` shared by every data model proxy.
    let modelMetamethods: LuaRef
    /// What data model proxies' metatables hold, one slot per type name (filled on first use).
    let modelTemplates: LuaRef
    /// The `__tostring` of `error` data models: `service.method: code: message`.
    let errorTostring: LuaRef
    /// `__pairs` and `__tostring` shared by every change-table prototype.
    let changeMetamethods: LuaRef
    /// Registry slot of the interned key strings of change tables.
    let changeKeys: Int32
    /// The metatable of the `info` table an `on` handler gets, which names a misspelled field.
    let eventInfoMetatable: LuaRef
    /// The metatable of a `didChange` change set as a handler gets it, which names a misspelled
    /// field and refuses a new one.
    let changeSetMetatable: LuaRef
    let subscriptionType: LuaObjectType<Subscription>
    let requestType: LuaObjectType<ServiceRequest>
    /// `json.null` and the metatables `json.array` and `json.object` give a table (the prelude's
    /// marks.lua): values from services carry them before the `json` module has loaded, and the
    /// module takes these when it does.
    let jsonMarks: (null: LuaRef, array: LuaRef, object: LuaRef)
    /// json.array's mark with an `__index` for a list of data models (the placemarks
    /// `geocoder:search` answers, a `didUpdateLocations`' `locations`): `p.name` on the list
    /// read nil, as if the place had no name. Only a miss reaches `__index`, so `p[i]` and
    /// `ipairs` cost what they did.
    let recordListMark: LuaRef
    /// marks.lua's `resolve`: a copy of a value with every part that has `__tojson` replaced by
    /// what it returns, which every conversion to JSON's values calls when it finds one.
    let jsonResolve: LuaRef
    /// Keeps alive the field names ``FieldNameCache`` holds, one slot per cache entry.
    let fieldNameAnchors: LuaRef

    init(vm: LuaVM) throws(LuaError) {
        modelMetamethods = Self.makeModelMetamethods(vm)
        vm.stack.newTable()
        modelTemplates = vm.ref()
        errorTostring = Self.makeErrorTostring(vm)
        crescent_push_change_keys(vm.state)
        changeKeys = vm.refID()
        changeMetamethods = try Self.makeChangeMetamethods(vm)
        eventInfoMetatable = UndeclaredField.shapeMetatable("event info", fields: ["event", "name", "object", "sub"], in: vm)
        changeSetMetatable = UndeclaredField.shapeMetatable("change set", fields: ChangeSet.fieldNames, readOnly: true, in: vm)
        functionDocs = Self.makeWeakKeyedTable(vm)
        vm.stack.newTable()
        fieldNameAnchors = vm.ref()
        subscriptionType = Self.makeSubscriptionType(vm)
        requestType = Self.makeRequestType(vm)
        try Prelude.marks.load(into: vm)
        try vm.call(arguments: 0, results: 4)                        // null array object resolve
        crescent_protect_json_mark(vm.state, -2)
        crescent_protect_json_mark(vm.state, -3)
        jsonResolve = vm.ref()
        let object = vm.ref(), array = vm.ref()
        jsonMarks = (vm.ref(), array, object)
        recordListMark = Self.makeRecordListMark(vm, arrayMark: array)
    }

    /// A copy of json.array's mark (its shape, its read-only face, protected as it is) whose
    /// `__index` raises for a name, at the script's line: `'name' read on a list of 3
    /// placemarks, not on one placemark: index it (list[1].name) or loop over it`. Names Lua's
    /// tools ask (`__name`) and numbers read nil.
    private static func makeRecordListMark(_ vm: LuaVM, arrayMark: LuaRef) -> LuaRef {
        let stack = vm.stack
        _ = stack.ensure(4)
        stack.newTable(fieldCount: 4)                                // mt
        arrayMark.push(onto: stack)                                  // mt array
        for name in ["__jsontype", "__metatable"] {
            stack.rawGet(-1, name)
            stack.rawSet(-3, name)
        }
        stack.pop()                                                  // mt
        vm.pushFunction { stack in                                   // list key
            guard stack.type(at: 2) == .string, let key = stack.text(at: 2), !key.hasPrefix("__") else { return .none }
            let count = stack.rawLength(1)
            _ = stack.rawGet(1, index: 1)
            let typeName = ModelBinding.modelFields(at: -1, in: stack) ?? "record"
            stack.pop()
            let items = count == 1 ? "1 \(typeName)" : "\(count) \(typeName)s"
            throw LuaRaise("'\(key)' read on a list of \(items), not on one \(typeName): index it (list[1].\(key)) "
                           + "or loop over it (for _, \(typeName) in ipairs(list) do ... end)")
        }
        stack.rawSet(-2, "__index")                                  // mt
        crescent_protect_json_mark(vm.state, -1)
        return vm.ref()
    }

    // MARK: Data models

    private static func makeModelMetamethods(_ vm: LuaVM) -> LuaRef {
        vm.stack.newTable(fieldCount: 4)
        vm.register(field: "__newindex") { stack in
            let typeName = ModelBinding.modelTypeName(at: 1, in: stack)
            throw LuaRaise("cannot set '\(typeName).\(stack.describe(at: 2))': a \(typeName) is read-only (it is a snapshot made by its service)")
        }
        // debug.getmetatable hands these to scripts, which may call them on any value: each checks
        // it was given a data model before reading its metatable.
        vm.register(field: "__pairs") { stack in
            try checkModel(stack)
            return ModelBinding.pairsOverModelFields(stack)
        }
        vm.register(field: "__eq") { stack in
            // Proxies of one snapshot share their fields table.
            guard crescent_push_model_fields(stack.state, 1) == LUA_TTABLE,
                  crescent_push_model_fields(stack.state, 2) == LUA_TTABLE else {
                stack.push(false)
                return .one
            }                                                        // fields1 fields2
            stack.push(lua_rawequal(stack.state, -1, -2) != 0)
            return .one
        }
        vm.register(field: "__tostring") { stack in
            try checkModel(stack)
            let typeName = ModelBinding.modelTypeName(at: 1, in: stack)
            crescent_push_model_fields(stack.state, 1)               // fields
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
        return vm.ref()
    }

    /// Throws unless argument 1 is a data model proxy.
    private static func checkModel(_ stack: LuaStack) throws(LuaRaise) {
        guard ModelBinding.modelFields(at: 1, in: stack) != nil else {
            throw stack.argumentError(1, function: "data model metamethod", expected: "data model")
        }
    }

    private static func makeErrorTostring(_ vm: LuaVM) -> LuaRef {
        vm.pushFunction { stack in
            guard crescent_push_model_fields(stack.state, 1) == LUA_TTABLE else {
                stack.push(ServiceError.typeName)
                return .one
            }                                                        // fields
            func field(_ name: String) -> String {
                defer { stack.pop() }
                return stack.rawGet(-1, name) == .string ? (stack.text(at: -1) ?? "") : ""
            }
            stack.push(field("where") + ServiceError.describe(code: field("code"), message: field("message"),
                                                              service: field("service"), method: field("method")))
            return .one
        }
        return vm.ref()
    }

    // MARK: Change tables

    /// The metamethods every change table shares (the prelude's change.lua): `pairs` and
    /// `tostring` (and so `inspect`) show the prototype's `object` and `key` beside its own fields.
    private static func makeChangeMetamethods(_ vm: LuaVM) throws(LuaError) -> LuaRef {
        try Prelude.change.load(into: vm)
        try vm.call(arguments: 0, results: 1)                        // metamethods
        // The metatable of each prototype's shared fields: reading a name no change table has
        // (`if change.intial then`) raises at the script's line instead of reading nil.
        let stack = vm.stack
        stack.newTable(fieldCount: 1)                                // metamethods mt
        vm.pushFunction { stack in                                   // shared key
            // Metamethod names (`__tojson`, `__name`) that generic code reads stay nil.
            if stack.type(at: 2) == .string, stack.text(at: 2)?.hasPrefix("__") == true { return .none }
            let key = stack.describe(at: 2)
            let listing = NameSuggestion.listing("fields", changeFields, suggesting: NameSuggestion.closest(to: key, among: changeFields))
            throw LuaRaise("no field '\(key)' on change (\(listing))")
        }
        stack.rawSet(-2, "__index")                                  // metamethods mt
        stack.rawSet(-2, "sharedMetatable")                          // metamethods
        return vm.ref()
    }

    /// The fields of every change table (change.lua): its own three and its prototype's two.
    private static let changeFields = ["coalesced", "initial", "key", "object", "sub"]

    /// A table whose keys do not keep what they name alive (`__mode = "k"`).
    private static func makeWeakKeyedTable(_ vm: LuaVM) -> LuaRef {
        let stack = vm.stack
        stack.newTable()                                             // t
        stack.newTable(fieldCount: 1)                                // t mt
        stack.push("k")
        stack.rawSet(-2, "__mode")
        lua_setmetatable(stack.state, -2)                            // t
        return vm.ref()
    }

    // MARK: Handles

    private static func makeSubscriptionType(_ vm: LuaVM) -> LuaObjectType<Subscription> {
        // The functions find their own type through this holder: it is set before any can run.
        var holder: LuaObjectType<Subscription>?
        let type = vm.objectType(
            Subscription.self, name: "Subscription",
            methods: [
                "cancel": { stack in
                    guard let type = holder else { return .none }
                    let subscription = try type.checkSelf(in: stack, function: "cancel")
                    try ExtraArguments.check(stack, takes: 1, signature: "subscription:cancel()", arity: "none", isMethod: true)
                    subscription.cancel()
                    return .none
                },
            ],
            getter: { stack in
                guard let subscription = holder?.object(at: 1, in: stack) else { return .none }
                switch stack.text(at: 2) {
                case "active": stack.push(subscription.isActive)
                case "deliveries": stack.push(subscription.deliveries)
                case "errors": stack.push(Int(subscription.errors))
                case "site": stack.push(subscription.site)
                case "target": stack.push(subscription.targetDescription)
                case "owner": stack.push(subscription.ownerName)
                default:
                    try UndeclaredField.check(stack.text(at: 2), on: "Subscription",
                                              fields: ["active", "deliveries", "errors", "site", "target", "owner"],
                                              methods: ["cancel"], in: stack)
                    stack.pushNil()
                }
                return .one
            },
            metamethods: [
                "__tostring": { stack in
                    guard let subscription = holder?.object(at: 1, in: stack) else { return .none }
                    stack.push("Subscription(\(subscription.targetDescription), \(subscription.isActive ? "active" : "cancelled"), \(subscription.site))")
                    return .one
                },
            ]
        )
        holder = type
        return type
    }

    private static func makeRequestType(_ vm: LuaVM) -> LuaObjectType<ServiceRequest> {
        // As for subscriptions: set before any of the functions can run.
        var holder: LuaObjectType<ServiceRequest>?
        let type = vm.objectType(
            ServiceRequest.self, name: "Request",
            methods: [
                "cancel": { stack in
                    guard let type = holder else { return .none }
                    let request = try type.checkSelf(in: stack, function: "cancel")
                    try ExtraArguments.check(stack, takes: 1, signature: "request:cancel()", arity: "none", isMethod: true)
                    request.binding?.cancelByUser(request)
                    return .none
                },
            ],
            getter: { stack in
                guard let request = holder?.object(at: 1, in: stack) else { return .none }
                switch stack.text(at: 2) {
                case "done": stack.push(request.isDone)
                case "method": stack.push("\(request.service).\(request.method)")
                default:
                    try UndeclaredField.check(stack.text(at: 2), on: "Request", fields: ["done", "method"],
                                              methods: ["cancel"], in: stack)
                    stack.pushNil()
                }
                return .one
            },
            metamethods: [
                "__tostring": { stack in
                    guard let request = holder?.object(at: 1, in: stack) else { return .none }
                    stack.push("Request(\(request.service).\(request.method), \(request.isDone ? "done" : "pending"))")
                    return .one
                },
            ]
        )
        holder = type
        return type
    }
}
