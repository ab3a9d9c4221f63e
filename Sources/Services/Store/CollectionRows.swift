import Model

/// A collection's records in memory, in insertion order (ascending `id`), with their ids kept
/// apart so a position is found by binary search.
///
/// Every change returns the ``ChangeSet`` that turns the old list into the new one; the
/// collection's ``ObservableCollection`` reports it.
struct CollectionRows: CollectionRecords {
    private(set) var ids: [Int64] = []
    /// The records, each with its `id` field.
    private(set) var records: [Value] = []
    /// False until the records were read from the database (see ``unloaded``).
    private(set) var isLoaded = true

    init() {}

    /// No records yet because none were read: the first ``replaceAll(with:)`` loads them.
    static var unloaded: CollectionRows {
        var rows = CollectionRows()
        rows.isLoaded = false
        return rows
    }

    /// Rows from `(id, record)` pairs sorted by id.
    init(sorted pairs: [(id: Int64, record: Value)]) {
        ids = pairs.map(\.id)
        records = pairs.map(\.record)
    }

    var count: Int { ids.count }

    /// The 0-based position of `id`, or nil.
    func index(of id: Int64) -> Int? {
        let low = insertionPoint(of: id)
        return low < ids.count && ids[low] == id ? low : nil
    }

    /// The record with `id`, or nil.
    func record(_ id: Int64) -> Value? { index(of: id).map { records[$0] } }

    /// Adds records whose ids are larger than every id present (SQLite's AUTOINCREMENT ids).
    mutating func append(_ added: [(id: Int64, record: Value)]) -> ChangeSet {
        guard !added.isEmpty else { return ChangeSet() }
        // Ids only grow, but an out-of-order one would still be placed right.
        if let first = added.first, let last = ids.last, first.id <= last {
            var merged = pairs
            merged += added
            merged.sort { $0.id < $1.id }
            return replaceAll(with: merged)
        }
        let start = ids.count
        ids += added.map(\.id)
        records += added.map(\.record)
        return ChangeSet(inserted: Array((start + 1)...(start + added.count)), insertedItems: added.map(\.record))
    }

    /// Replaces the record at 0-based `index`.
    mutating func replace(at index: Int, with record: Value) -> ChangeSet {
        records[index] = record
        return ChangeSet(updated: [index + 1], updatedItems: [record])
    }

    /// Removes the records at 0-based `indexes` (sorted, unique).
    mutating func remove(at indexes: [Int]) -> ChangeSet {
        guard !indexes.isEmpty else { return ChangeSet() }
        var keptIDs: [Int64] = []
        var keptRecords: [Value] = []
        keptIDs.reserveCapacity(ids.count - indexes.count)
        keptRecords.reserveCapacity(ids.count - indexes.count)
        var next = 0
        for position in ids.indices {
            if next < indexes.count && indexes[next] == position {
                next += 1
                continue
            }
            keptIDs.append(ids[position])
            keptRecords.append(records[position])
        }
        ids = keptIDs
        records = keptRecords
        return ChangeSet(deleted: indexes.map { $0 + 1 })
    }

    /// Sets each record given by id (nil removes it), in one change set: positions of the
    /// removed records in the list before, of the inserted and updated ones in the list after
    /// (what ``replaceAll(with:)`` would report, without comparing the records left alone).
    mutating func merge(_ changed: [Int64: Value?]) -> ChangeSet {
        var change = ChangeSet()
        let removed = changed.compactMap { id, record in record == nil ? index(of: id) : nil }.sorted()
        if !removed.isEmpty { change = remove(at: removed) }
        var inserted: [Int64] = [], updated: [Int64] = []
        for (id, record) in changed {
            guard let record else { continue }
            if let position = index(of: id) {
                guard records[position] != record else { continue }
                records[position] = record
                updated.append(id)
            } else {
                let position = insertionPoint(of: id)
                ids.insert(id, at: position)
                records.insert(record, at: position)
                inserted.append(id)
            }
        }
        for id in inserted.sorted() {
            guard let position = index(of: id) else { continue }
            change.inserted.append(position + 1)
            change.insertedItems.append(records[position])
        }
        for id in updated.sorted() {
            guard let position = index(of: id) else { continue }
            change.updated.append(position + 1)
            change.updatedItems.append(records[position])
        }
        return change
    }

    /// Where `id` is or would go.
    private func insertionPoint(of id: Int64) -> Int {
        var low = 0, high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Replaces everything with `pairs` (sorted by id) and returns exactly what changed: ids only
    /// before are deleted, ids only after are inserted, ids in both with a different record are
    /// updated.
    mutating func replaceAll(with newPairs: [(id: Int64, record: Value)]) -> ChangeSet {
        var change = ChangeSet()
        var old = 0, new = 0
        while old < ids.count || new < newPairs.count {
            if new == newPairs.count || (old < ids.count && ids[old] < newPairs[new].id) {
                change.deleted.append(old + 1)
                old += 1
            } else if old == ids.count || newPairs[new].id < ids[old] {
                change.inserted.append(new + 1)
                change.insertedItems.append(newPairs[new].record)
                new += 1
            } else {
                if records[old] != newPairs[new].record {
                    change.updated.append(new + 1)
                    change.updatedItems.append(newPairs[new].record)
                }
                old += 1
                new += 1
            }
        }
        self = CollectionRows(sorted: newPairs)
        return change
    }

    private var pairs: [(id: Int64, record: Value)] {
        zip(ids, records).map { (id: $0, record: $1) }
    }
}
