import Model

/// Who the Lua code running now works for: the scope that owns what it starts (subscriptions,
/// requests, starts, timers, tasks), the task whose coroutine runs it, and whether a turn of the
/// loop is under way.
///
/// The host switches these around every turn, handler and resume; the binding reads them on
/// every service call and delivery. Both hold this one final class, so each read is a field
/// load rather than a call through ``BindingEnvironment``. Used on the loop only; its
/// properties are internal, so the optimizer sees every access and drops the run-time
/// exclusivity checks (none is passed inout, and no access is held across a call that could
/// come back to it).
final class RunningCode {
    /// The script's scope: owns what the main chunk and its handlers start, ends at exit.
    let scriptScope = Scope(name: "script")
    /// The owner of what Lua code starts right now (the script, or a controller).
    var currentScope: Scope
    /// The task whose coroutine is running, while it runs.
    var currentTask: LuaTask?
    /// True while a turn runs (a clock job that fires meanwhile waits for a later turn).
    var inTurn = false

    init() {
        currentScope = scriptScope
    }

    /// Runs a handler of `subscription` with its owner as the scope, as ``withScope(_:_:)`` does.
    /// Deliveries call it for every handler, and their owner is almost always current already:
    /// then no scope is retained. A change `body` made to the scope is undone, to the owner while
    /// the subscription lives (so its owner does), else to the script's scope.
    func withOwner<Result>(of subscription: Subscription, _ body: () throws -> Result) rethrows -> Result {
        guard subscription.isOwned(by: currentScope) else { return try withScope(subscription.owner, body) }
        // Compared, never dereferenced: the owner may be gone when the handler ended it.
        let entry = ObjectIdentifier(currentScope)
        defer {
            if ObjectIdentifier(currentScope) != entry { currentScope = subscription.owner ?? scriptScope }
        }
        return try body()
    }

    /// Runs `body` with `scope` as the owner of whatever Lua code starts meanwhile (handlers run
    /// with their subscription's, timer's or request's owner, so a controller's handlers create
    /// things the controller owns).
    func withScope<Result>(_ scope: Scope?, _ body: () throws -> Result) rethrows -> Result {
        let target = scope.flatMap { $0.isEnded ? nil : $0 } ?? scriptScope
        // Usually the scope is current already (every delivery of a script's handlers): then
        // the swap and its reference counting are skipped; only a change `body` made is undone.
        if target === currentScope {
            defer { if currentScope !== target { currentScope = target } }
            return try body()
        }
        let previous = currentScope
        currentScope = target
        defer { currentScope = previous }
        return try body()
    }
}
