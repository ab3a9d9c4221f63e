public import Synchronization

/// The records an ``ObservableCollection`` keeps: a value that changes itself and says exactly
/// what changed (each mutation its owner makes returns the ``ChangeSet`` that turns the list
/// before into the list after).
public protocol CollectionRecords: Sendable {
    /// The records, in order: what `items` shows.
    var records: [Value] { get }
}

/// A list of records that publishes exact change sets: the one home of a collection's `items`,
/// `count` and `didChange` (the store's collections, a plugin's or a test's list).
///
/// The owner, the model object scripts see, declares those members in its interface and reports
/// through its own ``ChangePublisher``; it changes the records only through ``apply(_:)``, which
/// reports `items`, `count`, then `didChange` for each change that changed something. Changes are
/// reported one at a time, in the order they were made, even from several threads, so replaying
/// every change set on the `items` before it gives the `items` after it. A change is reported
/// under the lock that reads take, so a read that sees a change comes after its report has left
/// (the host uses this to keep what a script reads and what it hears in step).
///
/// ```swift
/// let readings = ObservableCollection(ValueList(), reportingTo: changes)
/// readings.apply { $0.insert([21.5]) }     // items, count, didChange { inserted = {1} ... }
/// ```
public final class ObservableCollection<Records: CollectionRecords>: Sendable {
    /// The records; held while a change is made and reported, so reports leave in the order of
    /// the changes and before any read can see them.
    @usableFromInline let storage: Mutex<Records>
    @usableFromInline let changes: ChangePublisher

    public init(_ records: Records, reportingTo changes: ChangePublisher) {
        storage = Mutex(records)
        self.changes = changes
    }

    /// The records, in order (a snapshot).
    @inlinable public var items: [Value] { storage.withLock { $0.records } }
    /// How many records there are.
    @inlinable public var count: Int { storage.withLock { $0.records.count } }

    /// Reads the records: `body` sees one consistent state.
    @inlinable public func withLock<Result>(_ body: (Records) -> Result) -> Result {
        storage.withLock { body($0) }
    }

    /// Makes one change and reports it: `items`, `count`, then `didChange` with the change set
    /// `change` returns (nothing when that is empty). The publisher's sinks run under the lock:
    /// they must not read or change this collection (the host's sink only queues). Inlinable so
    /// that the owner's module specializes it for its records (the store's write path).
    @inlinable public func apply(_ change: (inout Records) -> ChangeSet) {
        storage.withLock { records in
            let changeSet = change(&records)
            guard !changeSet.isEmpty else { return }
            let snapshot = records.records
            changes.propertyChanged("items", to: .array(snapshot))
            changes.propertyChanged("count", to: .integer(Int64(snapshot.count)))
            changes.emit("didChange", changeSet.value)
        }
    }
}
