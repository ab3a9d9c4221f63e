public import CLua

/// A Lua coroutine driven from Swift (the engine under `task(...)`).
///
/// Created from the function on top of the main stack; the thread is pinned in the registry while
/// this object lives.
public final class LuaCoroutine {
    /// What one resume ended with.
    public enum Step {
        /// The coroutine yielded `count` values, now on top of its stack.
        case yielded(Int32)
        /// The function returned `count` values, now on top of the coroutine's stack.
        case finished(Int32)
        /// The function raised: the message carries the coroutine's traceback, `value` is the
        /// error value itself.
        case failed(LuaError, value: LuaRef)
    }

    /// The coroutine's own state.
    public let thread: OpaquePointer
    /// Keeps the thread alive; released once the coroutine has ended for good.
    private var pin: LuaRef?
    unowned let vm: LuaVM

    /// Pops the function on top of `stack` (the main stack by default) and makes it the body of
    /// a new coroutine.
    public init(vm: LuaVM, from stack: LuaStack? = nil) {
        self.vm = vm
        let caller = stack?.state ?? vm.state
        // Invariant: lua_newthread never returns NULL (it raises on out of memory, and the host
        // runs Swift with the memory limit suspended).
        thread = lua_newthread(caller)!                 // f thread
        lua_rotate(caller, -2, 1)                       // thread f
        lua_xmove(caller, thread, 1)                    // thread          (co: f)
        pin = vm.ref(from: LuaStack(caller))
    }

    /// Lets the thread be collected. Call only when it will never run or be inspected again.
    public func release() { pin = nil }

    /// The coroutine's stack: push resume arguments here; read yielded or returned values here.
    public var stack: LuaStack { LuaStack(thread) }

    /// The coroutine's status: true while it can be resumed.
    public var isSuspendedOrFresh: Bool {
        let status = lua_status(thread)
        return status == LUA_YIELD || (status == LUA_OK && lua_gettop(thread) > 0)
    }

    /// True when the coroutine ended normally (it returned: not suspended, not failed), so its
    /// thread can run another function.
    @inlinable public var endedNormally: Bool { lua_status(thread) == LUA_OK }

    /// Removes a debug hook the coroutine's code set (`debug.sethook` in a task, a remote
    /// client's eval), before its thread runs other code; the VM's line hook (coverage), which a
    /// new thread would take from the main one, is kept: every run of a kept thread is counted.
    public func dropHook() {
        crescent_drop_hook(thread)
        if let hook = vm.lineHook { lua_sethook(thread, hook, LuaVM.lineMask, 0) }
    }

    /// Closes the coroutine's pending to-be-closed variables and makes it dead
    /// (`lua_resetthread`); an error one of them raises is dropped.
    public func reset() { _ = lua_resetthread(thread) }

    /// Resumes with the top `arguments` values of the coroutine's stack as arguments (or as the
    /// results of the pending yield).
    public func resume(arguments: Int32) -> Step {
        var results: Int32 = 0
        let status = crescent_resume(vm.state, thread, arguments, &results)
        switch status {
        case LUA_YIELD: return .yielded(results)
        case LUA_OK: return .finished(results)
        default:
            let error = vm.stack.popError(status)                     // error
            return .failed(error, value: vm.ref())
        }
    }
}
