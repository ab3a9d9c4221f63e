/// Plain records for an ``ObservableCollection``: a list changed by position (insert, remove,
/// replace, reload), each change returning what it changed. Positions given here are 0-based;
/// the change sets speak 1-based positions, as scripts see `items`.
public struct ValueList: CollectionRecords {
    public private(set) var records: [Value]

    public init(_ records: [Value] = []) {
        self.records = records
    }

    /// Inserts `newItems` at 0-based `index` (clamped to the list; nil appends).
    public mutating func insert(_ newItems: [Value], at index: Int? = nil) -> ChangeSet {
        guard !newItems.isEmpty else { return ChangeSet() }
        let start = min(max(index ?? records.count, 0), records.count)
        records.insert(contentsOf: newItems, at: start)
        return ChangeSet(inserted: Array((start + 1)...(start + newItems.count)), insertedItems: newItems)
    }

    /// Removes the items at 0-based `indexes` (out-of-range and repeated ones are ignored).
    public mutating func remove(at indexes: [Int]) -> ChangeSet {
        let valid = Set(indexes.filter { records.indices.contains($0) }).sorted()
        guard !valid.isEmpty else { return ChangeSet() }
        for index in valid.reversed() { records.remove(at: index) }
        return ChangeSet(deleted: valid.map { $0 + 1 })
    }

    /// Replaces the item at 0-based `index` (nothing when it is out of range).
    public mutating func replace(at index: Int, with item: Value) -> ChangeSet {
        guard records.indices.contains(index) else { return ChangeSet() }
        records[index] = item
        return ChangeSet(updated: [index + 1], updatedItems: [item])
    }

    /// Replaces every item.
    public mutating func reload(_ newItems: [Value]) -> ChangeSet {
        records = newItems
        return .reload(newItems)
    }
}
