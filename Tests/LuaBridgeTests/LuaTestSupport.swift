import CLua
import LuaBridge

/// Runs `source` and returns its results as Swift values.
func evaluate(_ vm: LuaVM, _ source: String) throws -> [LuaValue] {
    let base = vm.stack.top
    try vm.load(Array(source.utf8), name: "=test")
    try vm.call(arguments: 0, results: LUA_MULTRET)
    defer { vm.stack.setTop(base) }
    var results: [LuaValue] = []
    var index = base + 1
    while index <= vm.stack.top {
        results.append(try vm.stack.value(at: index, vm: vm))
        index += 1
    }
    return results
}

/// The first result of `source`.
func evaluateOne(_ vm: LuaVM, _ source: String) throws -> LuaValue {
    try evaluate(vm, source).first ?? .nil
}

/// Entries in the registry that hold a live value (free-list slots hold integers).
func registryEntries(_ vm: LuaVM) -> Int {
    let state = vm.state
    var count = 0
    lua_pushnil(state)
    while lua_next(state, crescent_registryindex()) != 0 {
        if lua_type(state, -1) != LUA_TNUMBER { count += 1 }
        lua_settop(state, -2)
    }
    return count
}

/// A Swift class exported to Lua in the tests.
final class Counter {
    var value: Int64 = 0
    nonisolated(unsafe) static var released = 0
    deinit { Counter.released += 1 }
}

/// Registers `Counter` with `add(n)` and a `value` property getter, and a global `newCounter()`.
/// The functions hold the VM unowned: the VM holds them (until it closes).
@discardableResult
func registerCounter(_ vm: LuaVM) -> LuaObjectType<Counter> {
    let type = vm.objectType(
        Counter.self, name: "Counter",
        methods: [
            "add": { [unowned vm] stack in
                let counter = try vm.objectType(Counter.self, name: "Counter").check(1, in: stack, function: "add")
                counter.value += try stack.checkInteger(2, function: "add")
                stack.push(counter.value)
                return .one
            },
        ],
        getter: { [unowned vm] stack in
            guard let counter = vm.objectType(Counter.self, name: "Counter").object(at: 1, in: stack),
                  stack.text(at: 2) == "value" else { return .none }
            stack.push(counter.value)
            return .one
        }
    )
    vm.register("newCounter") { stack in
        type.push(Counter(), onto: stack)
        return .one
    }
    return type
}
