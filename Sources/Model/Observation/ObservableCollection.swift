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
/// every change set on the `items` before it gives the `items` after it. Reads never wait for a
/// report to finish.
///
/// ```swift
/// let readings = ObservableCollection(ValueList(), reportingTo: changes)
/// readings.apply { $0.insert([21.5]) }     // items, count, didChange { inserted = {1} ... }
/// ```
public final class ObservableCollection<Records: CollectionRecords>: Sendable {
    @usableFromInline let storage: Mutex<Records>
    /// Held while a change is made and reported, so reports leave in the order of the changes.
    private let reporting = Mutex<Void>(())
    private let changes: ChangePublisher

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
    /// `change` returns (nothing when that is empty). Must not be called from an observer that
    /// the owner's publisher calls synchronously while it reports.
    public func apply(_ change: (inout Records) -> ChangeSet) {
        reporting.withLock { _ in
            let (changeSet, snapshot) = storage.withLock { records in (change(&records), records.records) }
            guard !changeSet.isEmpty else { return }
            changes.propertyChanged("items", to: .array(snapshot))
            changes.propertyChanged("count", to: .integer(Int64(snapshot.count)))
            changes.emit("didChange", changeSet.value)
        }
    }
}
