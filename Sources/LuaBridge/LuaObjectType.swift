public import CLua

/// The Lua face of one Swift class: a metatable built once per VM and cached by registry ref.
///
/// Method lookup never enters Swift: `__index` is a C function that does a raw lookup in the
/// methods table and falls back to the optional property getter. `__gc` releases the Swift object
/// once (running it again is harmless) and `__metatable` hides the metatable from scripts.
///
/// ```swift
/// let counters = vm.objectType(Counter.self, name: "Counter", methods: [
///     "increment": { stack in ... },
/// ])
/// counters.push(Counter(), onto: vm.stack)
/// ```
public final class LuaObjectType<Object: AnyObject> {
    /// The name shown by `tostring`, in argument errors and as `__name`.
    public let name: String
    /// Registry slot of the metatable.
    public let metatableRef: Int32
    @usableFromInline let metatable: UnsafeRawPointer

    init(name: String, metatableRef: Int32, metatable: UnsafeRawPointer) {
        self.name = name
        self.metatableRef = metatableRef
        self.metatable = metatable
    }

    /// The methods table of this type's metatable, pushed (for adding methods after creation).
    public func pushMethods(onto stack: LuaStack) {
        _ = crescent_getref(stack.state, metatableRef)
        lua_getfield(stack.state, -1, "__index")
        lua_getupvalue(stack.state, -1, 1)                                 // mt index methods
        lua_rotate(stack.state, -3, 1)
        stack.pop(2)
    }

    /// Pushes a new userdata that owns a strong reference to `object`, with `userValues` user
    /// value slots (``LuaStack`` reads them with `crescent_getuservalue`-style helpers).
    public func push(_ object: Object, onto stack: LuaStack, userValues: Int32 = 1) {
        _ = crescent_push_object(stack.state, Unmanaged.passRetained(object).toOpaque(), releaseObject, metatableRef, userValues)
    }

    /// The object at `index` when it is a live userdata of this type.
    @inlinable
    public func object(at index: Int32, in stack: LuaStack) -> Object? {
        guard let block = crescent_to_object(stack.state, index, metatable), let object = block.pointee.object else {
            return nil
        }
        return Unmanaged<Object>.fromOpaque(object).takeUnretainedValue()
    }

    /// The object owned by the userdata block at `index`, whatever type of `Object` made it, or
    /// nil when it was finalized. The caller has checked that the value is a userdata made by one
    /// of its types (by a marker its metatables carry): any other userdata is not such a block.
    public static func object(inBlockAt index: Int32, in stack: LuaStack) -> Object? {
        guard let block = crescent_object_block(stack.state, index), let object = block.pointee.object else { return nil }
        return Unmanaged<Object>.fromOpaque(object).takeUnretainedValue()
    }

    /// The object at argument `position`, or Lua's wording for a bad argument.
    @inlinable
    public func check(_ position: Int32, in stack: LuaStack, function: StaticString) throws(LuaRaise) -> Object {
        if let object = object(at: position, in: stack) { return object }
        if crescent_to_object(stack.state, position, metatable) != nil {
            throw .badArgument(Int(position), to: "\(function)", "\(name) was already finalized")
        }
        throw stack.argumentError(position, function: function, expected: name)
    }

    /// ``check(_:in:function:)`` of argument 1 of a method (`t:cancel()`): a call with '.'
    /// (`t.cancel()`) is told to use ':', as a service's method says.
    public func checkSelf(in stack: LuaStack, function: StaticString) throws(LuaRaise) -> Object {
        if let object = object(at: 1, in: stack) { return object }
        if crescent_to_object(stack.state, 1, metatable) != nil {
            throw .badArgument(1, to: "\(function)", "\(name) was already finalized")
        }
        let got = stack.type(at: 1) == .none ? "no value" : stack.typeName(at: 1)
        throw .badArgument(1, to: "\(function)", "\(name) expected, got \(got): call it with ':' on the \(name) (x:\(function)())")
    }
}

/// Releases the strong reference a userdata block owns. Runs from `__gc`, on the VM's loop.
private let releaseObject: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
    guard let pointer else { return }
    Unmanaged<AnyObject>.fromOpaque(pointer).release()
}

extension LuaVM {
    /// The metatable for `Object`, built on first use and cached for the VM's life.
    ///
    /// - Parameters:
    ///   - methods: functions found by `obj:name(...)` (raw lookup, no Swift on the lookup path).
    ///   - getter: called as `getter(obj, key)` for keys that are not methods (properties).
    ///   - setter: `__newindex(obj, key, value)`; without one, assignment raises an error.
    ///   - metamethods: extra entries such as `__tostring`, `__eq`, `__call`, `__len`.
    ///   - key: caches the metatable under this name instead of the Swift type, for one Swift class
    ///     shown as several Lua types (each service interface).
    ///   - cachesProperties: look in the object's user value table before calling `getter`.
    public func objectType<Object: AnyObject>(
        _ type: Object.Type,
        name: String,
        methods: [String: LuaFunctionBody] = [:],
        getter: LuaFunctionBody? = nil,
        setter: LuaFunctionBody? = nil,
        metamethods: [String: LuaFunctionBody] = [:],
        key: String? = nil,
        cachesProperties: Bool = false
    ) -> LuaObjectType<Object> {
        let cached = if let key {
            objectTypesByKey[key]
        } else {
            objectTypesByType.first { $0.type == ObjectIdentifier(type) }?.objectType
        }
        if let cached = cached as? LuaObjectType<Object> { return cached }
        let stack = self.stack
        _ = stack.ensure(6)
        stack.newTable(fieldCount: 8)                                    // mt
        stack.push(name)
        stack.rawSet(-2, "__name")
        stack.push(name)
        stack.rawSet(-2, "__metatable")
        crescent_pushcfunction(state, crescent_object_gc)
        stack.rawSet(-2, "__gc")
        stack.newTable(fieldCount: Int32(methods.count))                 // mt methods
        for (methodName, body) in methods.sorted(by: { $0.key < $1.key }) { register(field: methodName, body) }
        if let getter { pushFunction(getter) } else { stack.pushNil() }  // mt methods getter
        if cachesProperties {
            crescent_push_cached_index(state)                            // mt index
        } else {
            crescent_push_object_index(state)                            // mt index
        }
        stack.rawSet(-2, "__index")                                      // mt
        let assign: LuaFunctionBody = setter ?? { stack in
            let key = stack.describe(at: 2)
            throw LuaRaise("cannot set '\(key)' on a \(name): its fields are read-only")
        }
        register(field: "__newindex", assign)
        for (metamethod, body) in metamethods { register(field: metamethod, body) }
        // Invariant: the table was just pushed, so it has an identity pointer.
        let identity = lua_topointer(state, -1) ?? UnsafeRawPointer(bitPattern: 1)!
        let ref = crescent_ref(state)
        let objectType = LuaObjectType<Object>(name: name, metatableRef: ref, metatable: identity)
        if let key {
            objectTypesByKey[key] = objectType
        } else {
            objectTypesByType.append((ObjectIdentifier(type), objectType))
        }
        return objectType
    }
}
