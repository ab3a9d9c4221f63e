import Model
import Synchronization

/// One object's reports on their way to the loop, numbered in the order they were made.
///
/// A report made on the loop inside a turn is applied at once, which is cheaper than a hop; but
/// while a report made earlier on another thread (a store's load, a service's answer) waits here,
/// applying the later one first would deliver them out of order (a change set for position 185
/// before the one that inserted 1 to 184). So the loop takes the shortcut only when the mailbox
/// is empty; otherwise its report queues behind the others.
///
/// A waiting report describes a change the object has already made, which a script on the loop
/// can read before the report arrives. Reads take the reports made before them out of the mailbox
/// first (``ModelBinding/read(_:of:)``), so that a subscription made after a read hears every
/// change after what was read, exactly once: `length = c.count` then `c:on("didChange", ...)`
/// never counts a record twice.
final class ReportMailbox: Sendable {
    private let reports = Mutex<[ModelChange]>([])
    /// How many reports were posted, and how many taken out; posted - taken are waiting.
    private let posted = Atomic<UInt64>(0)
    private let taken = Atomic<UInt64>(0)

    init() {}

    /// True when no report is waiting.
    var isEmpty: Bool {
        // Taken first: it never passes posted, so equal loads in this order mean empty at the second.
        let takenCount = taken.load(ordering: .acquiring)
        return posted.load(ordering: .acquiring) == takenCount
    }

    /// How many reports wait to be taken out.
    var waiting: Int {
        let takenCount = taken.load(ordering: .acquiring)
        return Int(clamping: posted.load(ordering: .acquiring) &- takenCount)
    }

    /// The number of the last report posted (0 before the first).
    var lastPosted: UInt64 { posted.load(ordering: .acquiring) }

    /// Adds a report; true when the mailbox was empty, so the caller schedules a job to take it.
    func post(_ change: ModelChange) -> Bool {
        reports.withLock { reports in
            let wasEmpty = reports.isEmpty
            reports.append(change)
            // Counted under the lock, so report numbers follow the order of the list.
            posted.add(1, ordering: .releasing)
            return wasEmpty
        }
    }

    /// Takes out the waiting reports numbered up to `number` (every one by default), oldest first.
    func take(through number: UInt64 = .max) -> [ModelChange] {
        guard taken.load(ordering: .acquiring) < number else { return [] }
        return reports.withLock { reports in
            let alreadyTaken = taken.load(ordering: .relaxed)
            guard number > alreadyTaken else { return [] }
            let count = Int(clamping: min(UInt64(reports.count), number - alreadyTaken))
            let out: [ModelChange]
            if count == reports.count {
                out = reports
                reports = []
            } else {
                out = Array(reports[..<count])
                reports.removeFirst(count)
            }
            taken.add(UInt64(count), ordering: .releasing)
            return out
        }
    }
}
