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

    /// Where the task is between its resumes.
    enum State: Equatable {
        /// Made, not resumed yet.
        case suspended
        /// Its code runs now.
        case running
        /// Its code runs now and has arranged its own resume (a sleep timer, an awaited request)
        /// before it yields.
        case runningWithResumeArranged
        /// `cancel()` came while its own code ran: it ends at its next yield.
        case cancelling
        /// Yielded; a resume is arranged (a sleep timer, an awaited completion, the next turn).
        case waiting
        /// Returned, raised or was cancelled: never resumed again.
        case done
    }

    let coroutine: LuaCoroutine
    // Read on every resume, on the host's loop only. Internal, so the optimizer sees every access
    // and drops the run-time exclusivity check: no access to these is held across a call that
    // could come back to them.
    private(set) var state = State.suspended
    var result: LuaRef?
    var error: LuaRef?
    var wakeup: Cancellation?
    /// The request the task is waiting for, cancelled with the task.
    var awaiting: (any Cancellable)?
    var ownerSlot: Int32 = -1
    /// The scope that owns it and the host that runs it, while they live (``WeakLink``).
    var ownerLink: WeakLink<Scope>?
    var hostLink: WeakLink<Host>?
    var owner: Scope? { ownerLink?.object }
    var host: Host? { hostLink?.object }
    /// What the task's code creates belongs to this scope (its owner unless the code moves it,
    /// as a controller's lifecycle does between its lifetime and appearance scopes).
    var scopeLink: WeakLink<Scope>?
    var scope: Scope? { scopeLink?.object }
    /// Replaces the default handling of the task's end (errors reported as handler errors,
    /// results kept in `result`).
    var onEnd: ((Ending) -> Void)?
    /// True for a task made by the script's `task(fn)`: the programs its code spawns are its own
    /// and end with it (``endOwnedObjects()``), unless spawned with `outliveTask = true`.
    var ownsSpawns = false
    /// `file:line: ` where `task(fn)` was called, kept only when `fn` is a C function
    /// (`task(services.geocoder.reverse, ...)`): its errors carry no line of their own.
    var startSite: String?
    /// What its error is reported as, when not "error in task" (a `{ latest = true }` handler's
    /// subscription and site).
    var errorContext: String?
    /// What its code spawned that ends with it (see ``ownsSpawns``).
    var spawned: [OwnedObjectShare] = []
    /// Told `true` before each resume and `false` after (the REPL lets Ctrl-C interrupt only
    /// while its chunk's code runs).
    var onResume: ((Bool) -> Void)?

    /// True once the function returned, raised or was cancelled.
    var isDone: Bool { state == .done }

    /// Its code is about to run (resumed, from ``State/suspended`` or ``State/waiting``); false,
    /// changing nothing, when it must not run (done, or running already).
    func begin() -> Bool {
        switch state {
        case .suspended, .waiting:
            state = .running
            return true
        case .running, .runningWithResumeArranged, .cancelling, .done:
            return false
        }
    }

    /// Its running code arranged its own resume and is about to yield. A cancel already asked
    /// for wins (the arranged resume is dropped as the task ends).
    func arrangedResume() {
        if state == .running { state = .runningWithResumeArranged }
    }

    /// Its code yielded: what the host does next. A task that yielded without arranging a
    /// resume (a bare `coroutine.yield()`) waits for the next turn.
    enum AfterYield {
        case wait, resumeNextTurn, finishCancelled, nothing
    }

    /// Its code yielded (``begin()`` answered true before): moves to ``State/waiting`` and says
    /// what the host does next.
    func yielded() -> AfterYield {
        switch state {
        case .running:
            state = .waiting
            return .resumeNextTurn
        case .runningWithResumeArranged:
            state = .waiting
            return .wait
        case .cancelling:
            return .finishCancelled
        case .suspended, .waiting, .done:
            // Ended while its code ran (its host tore down): nothing is left to do.
            return .nothing
        }
    }

    /// `cancel()` while its own code runs: it ends at its next yield. False when it is not
    /// running (the caller ends it now) or is done.
    func requestCancel() -> Bool {
        switch state {
        case .running, .runningWithResumeArranged, .cancelling:
            state = .cancelling
            return true
        case .suspended, .waiting, .done:
            return false
        }
    }

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
        state = .done
        if !keepingCoroutine { coroutine.release() }
        owner?.forget(self)
        endOwnedObjects()
    }

    /// The task returned, raised or was cancelled: the programs it spawned end too (SIGTERM,
    /// then SIGKILL after the grace); each stays its owner's work until it has exited.
    private func endOwnedObjects() {
        let ending = spawned
        spawned = []
        for share in ending { share.taskEnded() }
    }

    static func == (lhs: LuaTask, rhs: LuaTask) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
