import Synchronization

/// An ordered list a model object owns and consumers observe: properties `items` and `count`,
/// and the event `didChange` with a ``ChangeSet`` for every mutation.
///
/// Owners mutate it through ``insert(_:at:)``, ``remove(at:)``, ``replace(at:with:)`` and
/// ``reload(_:)``; each reports exactly what changed. The interface can be extended with the
/// owner's methods (a store adds `add`, `remove`, `find` …).
public final class ObservableCollection: ModelObject {
    public let changes = ChangePublisher()
    public let interface: AnyInterface
    private let storage = Mutex<[Value]>([])

    /// - Parameters:
    ///   - typeName: the name scripts see (`collection`).
    ///   - extend: adds the owner's methods and events to the base interface.
    public init(typeName: String = "collection", summary: String = "An observable ordered list.",
                items: [Value] = [], extend: (inout Interface<ObservableCollection>) -> Void = { _ in }) {
        var declaration = Interface<ObservableCollection>(name: typeName, summary: summary) { d in
            d.property("items", type: "array", "The items, in order (a snapshot).") { .array($0.items) }
            d.property("count", type: "integer", "How many items there are.") { .integer(Int64($0.count)) }
            d.event("didChange", payload: "change set {inserted, deleted, updated, reload, insertedItems, updatedItems}",
                    "The items changed; positions are 1-based (deleted: before the change, the others: after), with the inserted and updated items.")
        }
        extend(&declaration)
        interface = declaration.erased
        storage.withLock { $0 = items }
    }

    public var items: [Value] { storage.withLock { $0 } }
    public var count: Int { storage.withLock { $0.count } }

    /// Inserts `newItems` at 0-based `index` (clamped to the list).
    public func insert(_ newItems: [Value], at index: Int? = nil) {
        guard !newItems.isEmpty else { return }
        storage.withLock { items in
            let start = min(max(index ?? items.count, 0), items.count)
            items.insert(contentsOf: newItems, at: start)
            report(items, ChangeSet(inserted: Array((start + 1)...(start + newItems.count)), insertedItems: newItems))
        }
    }

    /// Removes the items at 0-based `indexes` (out-of-range ones are ignored).
    public func remove(at indexes: [Int]) {
        storage.withLock { items in
            let valid = Set(indexes.filter { items.indices.contains($0) }).sorted()
            guard !valid.isEmpty else { return }
            for index in valid.reversed() { items.remove(at: index) }
            report(items, ChangeSet(deleted: valid.map { $0 + 1 }))
        }
    }

    /// Replaces the item at 0-based `index`.
    public func replace(at index: Int, with item: Value) {
        storage.withLock { items in
            guard items.indices.contains(index) else { return }
            items[index] = item
            report(items, ChangeSet(updated: [index + 1], updatedItems: [item]))
        }
    }

    /// Replaces every item.
    public func reload(_ newItems: [Value]) {
        storage.withLock { items in
            items = newItems
            report(items, .reload(newItems))
        }
    }

    /// Called with the lock held, so reports arrive in the order the mutations were made.
    private func report(_ snapshot: [Value], _ changeSet: ChangeSet) {
        changes.propertyChanged("items", to: .array(snapshot))
        changes.propertyChanged("count", to: .integer(Int64(snapshot.count)))
        changes.emit("didChange", changeSet.value)
    }
}
