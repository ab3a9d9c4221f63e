import Model

/// What the host keeps for one client, on the host loop: its scope (which owns everything the
/// client subscribed to or started, so a disconnect ends it all), its subscriptions by the
/// numbers the client knows them by, its running `eval` and its view watch.
final class RemoteSession {
    /// How a client watches the view.
    enum Watch: Equatable {
        case off
        case plain(width: Int)
        case json
    }

    let connection: RemoteConnection
    let scope: Scope
    private(set) var subscriptions: [Int: Subscription] = [:]
    private var nextSubscription = 0
    /// The running `eval` (one at a time per client).
    var evalTask: LuaTask?
    var watch = Watch.off
    /// The last render sent, so an unchanged view is not sent again.
    var lastRender: String?

    init(connection: RemoteConnection) {
        self.connection = connection
        scope = Scope(name: "remote client \(connection.id)")
    }

    /// Numbers and keeps `subscription` (the scope owns it already); returns its number.
    func add(_ subscription: Subscription) -> Int {
        nextSubscription += 1
        subscriptions[nextSubscription] = subscription
        return nextSubscription
    }

    /// Cancels subscription `number`; false when the client has none by that number.
    func cancel(_ number: Int) -> Bool {
        guard let subscription = subscriptions.removeValue(forKey: number) else { return false }
        subscription.cancel()
        return true
    }

    /// The client is gone: its subscriptions, tasks and timers end.
    func end() {
        subscriptions.removeAll()
        scope.end()
    }
}
