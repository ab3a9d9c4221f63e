public import CLua

/// A Lua value pinned in the registry so Swift can hold it across calls.
///
/// A reference is confined to the VM's loop like the VM itself (it is not `Sendable`), so it is
/// always released there: dropping the last Swift reference unpins the value. Async code that must
/// name a Lua value holds a ``LuaRefToken`` instead and hops onto the loop to use it.
public final class LuaRef: Hashable {
    /// The registry slot.
    public let id: Int32
    /// The Lua type of the pinned value.
    public let type: LuaType
    @usableFromInline let vm: LuaVM

    init(id: Int32, type: LuaType, vm: LuaVM) {
        self.id = id
        self.type = type
        self.vm = vm
    }

    deinit { vm.unref(id) }

    /// Pushes the pinned value.
    @inlinable public func push(onto stack: LuaStack) { _ = crescent_getref(stack.state, id) }

    /// A Sendable name for this value, for code that runs off the loop.
    public var token: LuaRefToken { LuaRefToken(id: id, generation: vm.generation) }

    public var typeName: String {
        type == .lightUserdata ? "userdata" : String(cString: lua_typename(vm.state, type.rawValue))
    }

    public static func == (lhs: LuaRef, rhs: LuaRef) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A Sendable name for a pinned Lua value: its registry slot and the VM generation it belongs to.
/// Events carrying a token for a VM that is gone are dropped.
public struct LuaRefToken: Hashable, Sendable {
    public let id: Int32
    public let generation: UInt64
}
