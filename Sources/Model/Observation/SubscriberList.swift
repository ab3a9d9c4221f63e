/// Subscribers of one target, in subscription order. Cancelled ones are removed lazily, so
/// cancelling is O(1) amortized even with a million subscribers.
final class SubscriberList {
    private var items: [Subscription] = []
    private var cancelled = 0

    func append(_ subscription: Subscription) { items.append(subscription) }

    /// A copy to iterate while handlers subscribe and cancel.
    func snapshot() -> [Subscription] { items }

    /// Records one cancellation; returns true when the list has no live subscriber left.
    func noteCancelled() -> Bool {
        cancelled += 1
        if cancelled == items.count {
            items.removeAll()
            cancelled = 0
            return true
        }
        if cancelled > 32 && cancelled * 2 > items.count {
            items.removeAll { !$0.isActive }
            cancelled = 0
        }
        return false
    }
}
