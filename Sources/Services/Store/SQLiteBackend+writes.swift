import GRDB
import Model
import Synchronization

/// The SQL of each ``StoreOperation`` on SQLite, and the change it makes to the rows in memory
/// once committed.
extension SQLiteBackend {
    /// `operation` as one write: its statements, then its report.
    static func write(_ operation: StoreOperation, to collection: StoreCollection) -> StoreWrite<Any, Value> {
        switch operation {
        case .add(let records, let single): erase(addition(records, single: single, to: collection), collection)
        case .update(let id, let fields): erase(update(id, setting: fields, in: collection), collection)
        case .remove(let ids): erase(removal(ids, from: collection), collection)
        case .clear: erase(clearing(collection), collection)
        }
    }

    /// The write with its intermediate result hidden, so the four kinds share one type. It
    /// first reads the collection's records if they were never read (its open waited for a
    /// lock), so it changes the list the database holds.
    private static func erase<Change>(_ write: StoreWrite<Change, Value>, _ collection: StoreCollection) -> StoreWrite<Any, Value> {
        StoreWrite(size: write.size, change: { db in
            try loadIfNeeded(collection, db)
            return try write.change(db) as Any
        }, committed: { change in
            // The value came from `change` just above, so the cast always succeeds.
            guard let change = change as? Change else { return .null }
            return write.committed(change)
        })
    }

    private typealias Stored = [(id: Int64, record: Value)]

    /// Inserts the records in one transaction.
    private static func addition(_ records: [Fields], single: Bool, to collection: StoreCollection) -> StoreWrite<Stored, Value> {
        let name = collection.name
        let rows = records.map { (fields: $0, json: Value.object($0).jsonText) }
        return StoreWrite(size: rows.count, change: { db in
            guard !rows.isEmpty else { return [] }
            let insert = try db.cachedStatement(sql: "INSERT INTO records (collection, data) VALUES (?, ?)")
            var added: Stored = []
            added.reserveCapacity(rows.count)
            for item in rows {
                try insert.execute(arguments: [name, item.json])
                var fields = item.fields
                fields["id"] = .integer(db.lastInsertedRowID)
                added.append((db.lastInsertedRowID, .object(fields)))
            }
            return added
        }, committed: { added in
            collection.apply { $0.append(added) }
            return single ? added.first?.record ?? .null : .array(added.map(\.record))
        })
    }

    /// Merges `newFields` into the record with `id`.
    private static func update(_ id: Int64, setting newFields: Fields,
                               in collection: StoreCollection) -> StoreWrite<(index: Int, record: Value, changed: Bool), Value> {
        let name = collection.name
        return StoreWrite(size: 1, change: { db in
            guard let index = collection.rows.withLock({ $0.index(of: id) }),
                  case .object(let existing) = collection.rows.withLock({ $0.records[index] }) else {
                throw collection.notFound(id)
            }
            var record = existing
            record.merge(newFields)
            // Nothing to write or report when no field changes.
            if record == existing { return (index, .object(existing), false) }
            record["id"] = nil
            try db.execute(sql: "UPDATE records SET data = ? WHERE id = ? AND collection = ?",
                           arguments: [Value.object(record).jsonText, id, name])
            guard db.changesCount == 1 else { throw collection.notFound(id) }
            record["id"] = .integer(id)
            return (index, .object(record), true)
        }, committed: { updated in
            if updated.changed { collection.apply { $0.replace(at: updated.index, with: updated.record) } }
            return updated.record
        })
    }

    /// Deletes the records with the given ids, all or none.
    private static func removal(_ ids: [Int64], from collection: StoreCollection) -> StoreWrite<[Int], Value> {
        let name = collection.name
        return StoreWrite(size: ids.count, change: { db in
            var indexes: [Int] = []
            guard !ids.isEmpty else { return indexes }
            let delete = try db.cachedStatement(sql: "DELETE FROM records WHERE id = ? AND collection = ?")
            for id in ids {
                guard let index = collection.rows.withLock({ $0.index(of: id) }) else { throw collection.notFound(id) }
                try delete.execute(arguments: [id, name])
                guard db.changesCount == 1 else { throw collection.notFound(id) }
                indexes.append(index)
            }
            return indexes.sorted()
        }, committed: { indexes in
            collection.apply { $0.remove(at: indexes) }
            return .integer(Int64(indexes.count))
        })
    }

    /// Deletes every record of the collection.
    private static func clearing(_ collection: StoreCollection) -> StoreWrite<[Int], Value> {
        let name = collection.name
        return StoreWrite(size: collection.count, change: { db in
            try db.execute(sql: "DELETE FROM records WHERE collection = ?", arguments: [name])
            return collection.rows.withLock { Array(0..<$0.count) }
        }, committed: { indexes in
            collection.apply { $0.remove(at: indexes) }
            return .integer(Int64(indexes.count))
        })
    }
}
