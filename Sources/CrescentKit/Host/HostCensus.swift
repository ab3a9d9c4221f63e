import LuaBridge
import Model

/// What a host holds right now: for tests, leak checks and debugging.
public struct HostCensus: Equatable, Sendable {
    public let timers: Int
    public let tasks: Int
    public let requests: Int
    public let subscriptions: Int
    public let controllers: Int
    public let references: Int
}

extension Host {
    /// Counts of live timers, tasks, in-flight requests, subscriptions, controllers on the
    /// navigation stack and pinned Lua references (but the few coroutines kept for the next
    /// tasks, which are bounded).
    public var census: HostCensus {
        HostCensus(timers: timers.count, tasks: tasks.count, requests: binding.requests.count,
                   subscriptions: binding.registry.liveCount, controllers: navigationDepth,
                   references: vm.liveReferences - idleCoroutines.count)
    }
}
