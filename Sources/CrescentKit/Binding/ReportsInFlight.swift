import Synchronization

/// How many of one object's reports made on other threads are still on their way to the loop.
///
/// A report made on the loop inside a turn is applied at once, which is cheaper than a hop; but
/// while a report made earlier on another thread (a store's load, a service's answer) waits in
/// the loop's queue, applying the later one first would deliver them out of order (a change set
/// for position 185 before the one that inserted 1 to 184). So the loop takes the shortcut only
/// when nothing is in flight; otherwise its report queues behind the others.
///
/// The object's publisher reports one change at a time (``ObservableCollection`` holds a lock
/// while it changes and reports), so a report made after another finished sees its count.
final class ReportsInFlight: Sendable {
    private let count = Atomic<Int>(0)

    init() {}

    /// True when no report from another thread is waiting for the loop.
    var isEmpty: Bool { count.load(ordering: .acquiring) == 0 }

    /// A report leaves for the loop.
    func sent() { count.add(1, ordering: .releasing) }

    /// A report that left for the loop was applied (or dropped because the host finished).
    func arrived() { count.subtract(1, ordering: .releasing) }
}
