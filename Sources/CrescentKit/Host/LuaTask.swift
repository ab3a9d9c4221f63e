import LuaBridge
import Model
import NIOCore

/// A task made by `task(fn, ...)`: a coroutine the host resumes when what it waits for is ready.
final class LuaTask: Hashable, Cancellable {
    /// How a task ended, for a host-made task that handles its own end (a REPL chunk).
    enum Ending {
        /// Returned `count` values, on top of `stack` until the handler returns.
        case returned(LuaStack, count: Int32)
        case failed(LuaError)
        case cancelled
    }

    let coroutine: LuaCoroutine
    // Read on every resume. Unchecked, as ``ServiceRequest``'s state: a task is used on the
    // host's loop only, and no access to these is held across a call that could come back to them.

    /// True once the function returned, raised or was cancelled.
    @exclusivity(unchecked) var isDone = false
    /// A resume is already arranged (a sleep timer, an awaited completion, the next turn).
    @exclusivity(unchecked) var isWaiting = false
    /// `cancel()` was called while the task itself was running.
    @exclusivity(unchecked) var cancelRequested = false
    @exclusivity(unchecked) var result: LuaRef?
    @exclusivity(unchecked) var error: LuaRef?
    @exclusivity(unchecked) var wakeup: Cancellation?
    /// The request the task is waiting for, cancelled with the task.
    @exclusivity(unchecked) var awaiting: (any Cancellable)?
    @exclusivity(unchecked) var ownerSlot: Int32 = -1
    /// The scope that owns it and the host that runs it, while they live (``WeakLink``).
    @exclusivity(unchecked) var ownerLink: WeakLink<Scope>?
    @exclusivity(unchecked) var hostLink: WeakLink<Host>?
    var owner: Scope? { ownerLink?.object }
    var host: Host? { hostLink?.object }
    /// What the task's code creates belongs to this scope (its owner unless the code moves it,
    /// as a controller's lifecycle does between its lifetime and appearance scopes).
    @exclusivity(unchecked) var scopeLink: WeakLink<Scope>?
    var scope: Scope? { scopeLink?.object }
    /// Replaces the default handling of the task's end (errors reported as handler errors,
    /// results kept in `result`).
    @exclusivity(unchecked) var onEnd: ((Ending) -> Void)?
    /// Told `true` before each resume and `false` after (the REPL lets Ctrl-C interrupt only
    /// while its chunk's code runs).
    @exclusivity(unchecked) var onResume: ((Bool) -> Void)?

    init(coroutine: LuaCoroutine) { self.coroutine = coroutine }

    /// Cancelled by its owner or by the script.
    func cancel() { host?.cancel(self) }

    /// Stops any pending wake-up or awaited request, unpins the coroutine (unless the host keeps
    /// it to run another task) and leaves its owner. Idempotent.
    func invalidate(keepingCoroutine: Bool = false) {
        wakeup?.cancel()
        wakeup = nil
        let request = awaiting
        awaiting = nil
        request?.cancel()
        isDone = true
        if !keepingCoroutine { coroutine.release() }
        owner?.forget(self)
    }

    static func == (lhs: LuaTask, rhs: LuaTask) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
