import LuaBridge
import NIOCore

/// A task made by `task(fn, ...)`: a coroutine the host resumes when what it waits for is ready.
final class LuaTask: Hashable {
    let coroutine: LuaCoroutine
    /// True once the function returned, raised or was cancelled.
    var isDone = false
    /// A resume is already arranged (a sleep timer, an awaited completion, the next turn).
    var isWaiting = false
    /// `cancel()` was called while the task itself was running.
    var cancelRequested = false
    var result: LuaRef?
    var error: LuaRef?
    var wakeup: Scheduled<Void>?

    init(coroutine: LuaCoroutine) { self.coroutine = coroutine }

    /// Stops any pending wake-up and unpins what the task held. Idempotent.
    func invalidate() {
        wakeup?.cancel()
        wakeup = nil
        isDone = true
    }

    static func == (lhs: LuaTask, rhs: LuaTask) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
