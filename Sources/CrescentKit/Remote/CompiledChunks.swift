import LuaBridge

/// The functions of the chunks `eval` compiled lately, by their text, on the host loop: a
/// client that sends the same chunk again (a status bar polling `eval`) skips the compiler.
///
/// Each eval still runs a fresh call of the chunk: its locals, and the closures and tables it
/// makes, are new each time. A chunk's only state between calls is its `_ENV` upvalue, which
/// the chunk may assign (`_ENV = {}`) or join to another function's (`debug.upvaluejoin`): a
/// function is reused only while that upvalue is still its own and still holds the globals,
/// as a fresh compile's does; otherwise it is compiled again.
final class CompiledChunks {
    /// How many chunks are kept; the oldest is forgotten first.
    static let limit = 32
    /// Longer chunks are compiled each time: they are pasted code, not a poller's.
    static let maxLength = 4096

    private struct Entry {
        let function: LuaRef
        /// The identity of the function's `_ENV` upvalue as it was compiled.
        let environment: UnsafeMutableRawPointer?
    }

    private var entries: [String: Entry] = [:]
    private var order: [String] = []

    /// Pushes the function compiled from `code` onto the VM's main stack and returns true, or
    /// returns false (nothing pushed) when it is not kept or no longer pristine.
    func push(_ code: String, vm: LuaVM) -> Bool {
        guard let entry = entries[code] else { return false }
        let stack = vm.stack
        entry.function.push(onto: stack)
        if stack.upvalueIdentity(of: -1, 1) == entry.environment && Self.holdsGlobals(-1, in: stack) { return true }
        vm.stack.pop()
        entries[code] = nil
        order.removeAll { $0 == code }
        return false
    }

    /// Keeps the function on top of the VM's main stack (left there) as `code`'s.
    func keep(_ code: String, vm: LuaVM) {
        // A chunk that names `_ENV` may assign it while another client's call of the same
        // text is still running: such a chunk gets a function of its own each time.
        guard code.utf8.count <= Self.maxLength, entries[code] == nil, !code.contains("_ENV") else { return }
        if order.count >= Self.limit { entries[order.removeFirst()] = nil }
        let environment = vm.stack.upvalueIdentity(of: -1, 1)
        vm.stack.pushValue(at: -1)
        entries[code] = Entry(function: vm.ref(), environment: environment)
        order.append(code)
    }

    /// Forgets every chunk (on the loop, before the VM closes).
    func removeAll() {
        entries.removeAll()
        order.removeAll()
    }

    var count: Int { entries.count }

    /// True when upvalue 1 (`_ENV`) of the function at `index` is the globals table.
    private static func holdsGlobals(_ index: Int32, in stack: LuaStack) -> Bool {
        let function = stack.absolute(index)
        guard stack.pushUpvalue(of: function, 1) else { return false }   // env
        stack.pushGlobals()                                              // env G
        let same = stack.rawEqual(-1, -2)
        stack.pop(2)
        return same
    }
}
