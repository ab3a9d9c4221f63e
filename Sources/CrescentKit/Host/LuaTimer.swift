import LuaBridge
import Model
import Services

/// A timer made by `timer.after` / `timer.every` / `timer.at` / `timer.cron`: the Swift side of
/// the `Timer` handle.
///
/// While active it pins its callback and its own Lua handle (so the handle passed to the callback
/// is the one the script holds) and counts as pending work for the exit rule.
final class LuaTimer: Hashable, Cancellable {
    let interval: Double
    let repeats: Bool
    var callback: LuaRef?
    var handle: LuaRef?
    var scheduled: Cancellation?
    /// When it fires next, in the host clock's uptime.
    var deadline: Duration
    var firings = 0
    /// Failures of its callback in a row: a repeating timer is cancelled at the observer
    /// registry's `maxFailures`, as an `on` handler is.
    var consecutiveErrors: Int32 = 0
    /// Where the script made it (`s.lua:3`), for the warning when it is cancelled for failing.
    var site = "?"
    /// Whether the warning that its callback's returned boolean does not stop it was said.
    var saidValueIgnored = false
    /// For `timer.at` and `timer.cron`: the wall-clock times it fires at (it repeats).
    var schedule: WallSchedule?
    var ownerSlot: Int32 = -1
    /// The scope that owns it and the host that runs it, while they live (``WeakLink``).
    var ownerLink: WeakLink<Scope>?
    var hostLink: WeakLink<Host>?
    var owner: Scope? { ownerLink?.object }
    var host: Host? { hostLink?.object }

    init(interval: Double, repeats: Bool, deadline: Duration) {
        self.interval = interval
        self.repeats = repeats
        self.deadline = deadline
    }

    var isActive: Bool { callback != nil }

    /// Cancelled by its owner or by the script: it will not fire again.
    func cancel() { host?.cancel(self) }

    /// Stops the timer and unpins what it held. Idempotent.
    func invalidate() {
        scheduled?.cancel()
        scheduled = nil
        callback = nil
        handle = nil
    }

    static func == (lhs: LuaTimer, rhs: LuaTimer) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
