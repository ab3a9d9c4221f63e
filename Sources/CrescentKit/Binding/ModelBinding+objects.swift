import CLua
import LuaBridge
import Model

extension ModelBinding {
    /// Pushes the one userdata of `object` in this VM, creating it (and its metatable) on first use.
    func pushObject(_ object: any ModelObject, box existing: ObjectBox? = nil, onto stack: LuaStack) {
        let id = ObjectIdentifier(object)
        if let known = objects[id] {
            known.userdata.push(onto: stack)
            return
        }
        let box = existing ?? ObjectBox(object, generation: generation, crossesVMs: host.isPluginService(object))
        let type = objectType(for: box)
        _ = stack.ensure(16)
        type.push(box, onto: stack, userValues: 2)                   // ud
        stack.newTable()                                             // ud cache
        _ = crescent_setuservalue(stack.state, -2)                   // ud
        stack.newTable()                                             // ud models
        _ = lua_setiuservalue(stack.state, -2, 2)                    // ud
        // A metatable of its own whose __index is the cache: a cached read is the VM's lookup.
        crescent_own_cached_index(stack.state)
        stack.pushValue(at: -1)
        objects[id] = (box, vm.ref(from: stack))
        attachSink(to: box)
    }

    /// The box of any model object's userdata at `index`, whatever its interface.
    func anyObjectBox(at index: Int32, in stack: LuaStack) -> ObjectBox? {
        guard stack.type(at: index) == .userdata, lua_getmetatable(stack.state, index) != 0 else { return nil }
        let isObject = lua_rawgetp(stack.state, -1, objectMarker) == LUA_TBOOLEAN
        stack.pop(2)
        guard isObject else { return nil }
        return LuaObjectType<ObjectBox>.object(inBlockAt: index, in: stack)
    }

    /// The box at argument `position`, or a message naming the method and how to call it.
    /// Every method of a model object checks its `self` here, so none runs once the run has ended.
    func checkSelf(_ stack: LuaStack, _ type: LuaObjectType<ObjectBox>?, signature: @autoclosure () -> String) throws -> ObjectBox {
        try checkRunning(signature())
        if let box = type?.object(at: 1, in: stack) {
            try checkCurrent(box, signature())
            return box
        }
        let got = stack.type(at: 1) == .none ? "no value" : stack.typeName(at: 1)
        throw LuaRaise("\(signature()): call it with ':' on the object (got \(got) as self)")
    }

    /// Throws unless the run is still on: after teardown, what the script calls (a `__gc`
    /// finalizer as the VM closes) is an error naming `function`, never work started for nobody.
    func checkRunning(_ function: @autoclosure () -> String) throws(LuaRaise) {
        guard isTornDown else { return }
        throw LuaRaise("\(function()): the run has ended (services cannot be used from a finalizer at exit)")
    }

    /// Throws when `box` is of an earlier test's model (a spec file's host gives each test new
    /// services): a service object kept from then (in an upvalue, a describe's local) must not
    /// reach the new test's services, nor act on its own, torn down.
    func checkCurrent(_ box: ObjectBox, _ function: @autoclosure () -> String) throws(LuaRaise) {
        guard box.generation != generation else { return }
        let what = box.object.isService ? "services.\(box.name)" : "this \(box.name)"
        throw LuaRaise("\(function()): \(what) was read in an earlier test, whose services were torn down when it ended (each test "
            + "gets fresh services): read services.\(box.object.isService ? box.name : "NAME") again inside the test or a before_each, "
            + "not once for the whole file or block")
    }

    private func objectType(for box: ObjectBox) -> LuaObjectType<ObjectBox> {
        if let known = interfaceTypes[box.name] { return known }
        let interface = box.interface
        let kind = box.object.isService ? "service" : interface.name
        var typeHolder: LuaObjectType<ObjectBox>?
        let methods = methodFunctions(for: box, type: { typeHolder })
        methodNames[interface.name] = methods.keys.sorted()
        let type = vm.objectType(
            ObjectBox.self, name: interface.name, methods: methods,
            getter: { [unowned self] stack in
                guard let box = typeHolder?.object(at: 1, in: stack), stack.type(at: 2) == .string,
                      let key = stack.text(at: 2) else {
                    stack.pushNil()
                    return .one
                }
                do throws(LuaRaise) {
                    try self.checkCurrent(box, "\(box.object.isService ? "services." : "")\(box.name).\(key)")
                } catch {
                    // A property read raises from the metamethod, which Lua gives no place: the
                    // reader's `file:line` first, as a method's error has it.
                    let place = [1, 2].lazy.map { stack.place(level: $0) }.first { !$0.isEmpty } ?? ""
                    throw LuaRaise(place + error.message)
                }
                guard let property = box.interface.property(key) else { throw self.undeclared(key, of: box, stack) }
                let value = self.read(property, of: box)
                self.push(value, of: box.object, onto: stack)            // obj key value
                // A value pinned for an event's handler is older than the object: never cached.
                if box.pinned?[key] != nil { return .one }
                // Tables are handed out fresh on each read, so a script that changes its copy
                // cannot change what anyone else reads; scalars and read-only models are cached.
                if case .array = value { return .one }
                if case .object = value { return .one }
                // The cache (user value 1) is the object's __index, which would hand a data model
                // out itself: models wait in user value 2, read through a fresh proxy each time.
                let slot: Int32 = if case .model = value { 2 } else { 1 }
                guard lua_getiuservalue(stack.state, 1, slot) == LUA_TTABLE else { // obj key value cache
                    stack.pop()
                    return .one
                }
                stack.pushValue(at: 2)
                stack.pushValue(at: -3)
                lua_rawset(stack.state, -3)
                stack.pop()
                return .one
            },
            setter: { stack in
                let key = stack.describe(at: 2)
                if kind == "service" {
                    throw LuaRaise("cannot set '\(interface.name).\(key)': service properties are read-only (the service updates them; see help(services.\(interface.name)))")
                }
                throw LuaRaise("cannot set '\(interface.name).\(key)': its properties are read-only (its service updates them; see help(\(interface.name)))")
            },
            metamethods: [
                "__tostring": { stack in
                    stack.push(kind == "service" ? "<service \(interface.name)>" : "<\(interface.name)>")
                    return .one
                },
            ],
            key: "model." + interface.name,
            cachesProperties: true
        )
        typeHolder = type
        _ = crescent_getref(vm.state, type.metatableRef)
        lua_pushboolean(vm.state, 1)
        lua_rawsetp(vm.state, -2, objectMarker)
        vm.stack.pop()
        interfaceTypes[box.name] = type
        documentMethods(of: type, interface: interface)
        documentCommonMethods(of: type, box: box)
        return type
    }

    /// The error for reading `key` of `box` when it is neither a property nor a method: named as
    /// the kind of name it most resembles (`services.store:colection()` reads `colection` before
    /// calling it), with the declared names of that kind and the closest one, at the script's line
    /// (level 1 is the C `__index` that called the getter).
    private func undeclared(_ key: String, of box: ObjectBox, _ stack: LuaStack) -> LuaRaise {
        let properties = box.interface.properties.map(\.name)
        let methods = methodNames[box.interface.name] ?? box.interface.methods.map(\.name)
        let detail = UndeclaredField.message(key, on: box.name, kind: "property", fields: properties, methods: methods)
        luaL_where(stack.state, 2)
        let place = stack.text(at: -1) ?? ""
        stack.pop()
        return LuaRaise(place + detail)
    }
}
