import GRDB
public import Model
import Synchronization

/// One named collection of a store: an ordered list of JSON-shaped records kept in SQLite, with
/// the list in memory for `items`, `count`, `get`, `page` and `find`.
///
/// Every write is one transaction on the store's writer; once it commits, the list in memory
/// changes and the collection reports `items`, `count` and `didChange` (a ``ChangeSet``), still
/// on the writer, so reports go out in commit order. Writes by other processes arrive the same
/// way, as an exact change set, within the store's poll interval.
///
/// `items` is a snapshot of the whole list: fine for a few thousand records. Views over large
/// collections should read `page(offset, limit)` and follow `didChange`, and observers should
/// watch `count` or `didChange` rather than `items` (each change to an observed `items` copies the
/// list). To add many records, pass them to one `add({...})`: one transaction, one change set.
///
/// A write whose request is cancelled after it has started still commits (the script hears
/// `cancelled`, and `didChange` tells what happened).
public final class StoreCollection: ModelObject {
    /// The collection's name (`store:collection(name)`).
    public let name: String
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }

    private let database: StoreDatabase
    private let rows: Mutex<CollectionRows>
    private let writesOnLoop: Bool

    init(name: String, rows: CollectionRows, database: StoreDatabase) {
        self.name = name
        self.rows = Mutex(rows)
        self.database = database
        writesOnLoop = database.settings.writesOnLoop
    }

    /// The records, in insertion order, each with its `id`.
    public var items: [Value] { rows.withLock { $0.records } }
    /// How many records there are.
    public var count: Int { rows.withLock { $0.count } }

    // MARK: Reading (from memory)

    /// The record with `id`.
    public func get(_ id: Int64) throws(ServiceError) -> Value {
        guard let record = rows.withLock({ $0.record(id) }) else { throw notFound(id) }
        return record
    }

    /// Up to `limit` records after skipping `offset` of them (`page(0, 20)` is `items[1..20]`).
    public func page(offset: Int64, limit: Int64) throws(ServiceError) -> [Value] {
        guard offset >= 0 else { throw ServiceError(.invalidArgument, "offset must be >= 0, got \(offset)") }
        guard limit >= 0 else { throw ServiceError(.invalidArgument, "limit must be >= 0, got \(limit)") }
        return rows.withLock { rows in
            let start = Int(clamping: min(offset, Int64(rows.count)))
            let end = start + Int(clamping: min(limit, Int64(rows.count - start)))
            return Array(rows.records[start..<end])
        }
    }

    /// The records equal to `query`'s fields, ordered and paged as it says.
    public func find(_ criteria: Value, options: Value = .null) throws(ServiceError) -> [Value] {
        let query = try RecordQuery(criteria: criteria, options: options)
        return query.run(on: items)
    }

    // MARK: Writing (through the database)

    /// Stores one record or an array of records; returns the stored record(s) with their new
    /// `id`. An `id` field given in a record is replaced. Nothing is written when any record is
    /// invalid.
    public func add(_ recordOrRecords: Value) throws(ServiceError) -> Value {
        try database.write(try addition(recordOrRecords))
    }

    /// Sets `fields` on the record with `id` (other fields stay) and returns the record.
    public func update(_ id: Int64, fields: Value) throws(ServiceError) -> Value {
        try database.write(try self.update(id, setting: fields))
    }

    /// Removes the records with the given ids (one id or an array); returns how many. When any
    /// id is unknown, nothing is removed (`not_found`).
    public func remove(_ idOrIDs: Value) throws(ServiceError) -> Value {
        try database.write(removal(idOrIDs))
    }

    /// Removes every record; returns how many there were.
    public func clear() throws(ServiceError) -> Value {
        try database.write(clearing())
    }

    // MARK: Writing for scripts

    /// `add` answering through `reply`: on the loop when the write cannot wait for anything,
    /// else on the store's writer queue (see ``StoreDatabase``).
    func add(_ recordOrRecords: Value, reply: Reply) {
        perform(size: recordOrRecords.arrayValue?.count ?? 1, reply: reply) { () throws(ServiceError) in
            try self.addition(recordOrRecords)
        }
    }

    /// `update` answering through `reply`.
    func update(_ id: Int64, fields: Value, reply: Reply) {
        perform(size: 1, reply: reply) { () throws(ServiceError) in try self.update(id, setting: fields) }
    }

    /// `remove` answering through `reply`.
    func remove(_ idOrIDs: Value, reply: Reply) {
        perform(size: idOrIDs.arrayValue?.count ?? 1, reply: reply) { () throws(ServiceError) in self.removal(idOrIDs) }
    }

    /// `clear` answering through `reply`.
    func clear(reply: Reply) {
        perform(size: count, reply: reply) { () throws(ServiceError) in self.clearing() }
    }

    /// Prepares and runs a write of `size` rows: at once on this thread (the loop) when allowed
    /// and nothing can make it wait, else prepared and run on the writer queue.
    private func perform<Change>(size: Int, reply: Reply,
                                 _ prepare: @escaping @Sendable () throws(ServiceError) -> StoreWrite<Change, Value>) {
        if writesOnLoop && size <= StoreDatabase.immediateRowLimit {
            let write: StoreWrite<Change, Value>
            do {
                write = try prepare()
            } catch {
                reply(.failure(error))
                return
            }
            if let outcome = database.writeIfImmediate(write, mayCommit: { reply.commit() }) {
                reply(outcome)
                return
            }
            database.writeLater({ () throws(ServiceError) in write }, unlessCancelled: { reply.isCancelled },
                                mayCommit: { reply.commit() }, done: { reply($0) })
            return
        }
        database.writeLater(prepare, unlessCancelled: { reply.isCancelled }, mayCommit: { reply.commit() }, done: { reply($0) })
    }

    // MARK: The writes

    private typealias Stored = [(id: Int64, record: Value)]

    /// Checks and encodes the records, then inserts them in one transaction.
    private func addition(_ recordOrRecords: Value) throws(ServiceError) -> StoreWrite<Stored, Value> {
        let single: Bool
        let given: [Value]
        switch recordOrRecords {
        case .array(let items):
            single = false
            given = items
        default:
            single = true
            given = [recordOrRecords]
        }
        var prepared: [(fields: [String: Value], json: String)] = []
        prepared.reserveCapacity(given.count)
        for (index, value) in given.enumerated() {
            var fields = try RecordValidator.record(value, path: single ? "record" : "records[\(index + 1)]")
            fields["id"] = nil
            prepared.append((fields, Value.object(fields).jsonText))
        }
        let name = self.name, rows = prepared
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
            self.apply { $0.append(added) }
            return single ? added.first?.record ?? .null : .array(added.map(\.record))
        })
    }

    /// Checks the fields, then merges them into the record with `id`.
    private func update(_ id: Int64, setting fields: Value) throws(ServiceError) -> StoreWrite<(index: Int, record: Value, changed: Bool), Value> {
        var changes = try RecordValidator.record(fields, path: "fields")
        if let given = changes["id"] {
            guard RecordQuery.equal(given, .integer(id)) else {
                throw ServiceError(.invalidArgument, "fields.id cannot change (the record's id is \(id))")
            }
            changes["id"] = nil
        }
        let name = self.name, newFields = changes
        return StoreWrite(size: 1, change: { db in
            guard let index = self.rows.withLock({ $0.index(of: id) }),
                  case .object(let existing) = self.rows.withLock({ $0.records[index] }) else {
                throw self.notFound(id)
            }
            var record = existing
            record.merge(newFields) { _, new in new }
            // Nothing to write or report when no field changes.
            if record == existing { return (index, .object(existing), false) }
            record["id"] = nil
            try db.execute(sql: "UPDATE records SET data = ? WHERE id = ? AND collection = ?",
                           arguments: [Value.object(record).jsonText, id, name])
            guard db.changesCount == 1 else { throw self.notFound(id) }
            record["id"] = .integer(id)
            return (index, .object(record), true)
        }, committed: { updated in
            if updated.changed { self.apply { $0.replace(at: updated.index, with: updated.record) } }
            return updated.record
        })
    }

    /// Deletes the records with the given ids, all or none.
    private func removal(_ idOrIDs: Value) -> StoreWrite<[Int], Value> {
        let ids: [Int64]
        switch idOrIDs {
        case .array(let items): ids = Array(Set(items.compactMap(\.integerValue))).sorted()
        default: ids = idOrIDs.integerValue.map { [$0] } ?? []
        }
        let name = self.name
        return StoreWrite(size: ids.count, change: { db in
            var indexes: [Int] = []
            guard !ids.isEmpty else { return indexes }
            let delete = try db.cachedStatement(sql: "DELETE FROM records WHERE id = ? AND collection = ?")
            for id in ids {
                guard let index = self.rows.withLock({ $0.index(of: id) }) else { throw self.notFound(id) }
                try delete.execute(arguments: [id, name])
                guard db.changesCount == 1 else { throw self.notFound(id) }
                indexes.append(index)
            }
            return indexes.sorted()
        }, committed: { indexes in
            self.apply { $0.remove(at: indexes) }
            return .integer(Int64(indexes.count))
        })
    }

    /// Deletes every record of the collection.
    private func clearing() -> StoreWrite<[Int], Value> {
        let name = self.name
        return StoreWrite(size: count, change: { db in
            try db.execute(sql: "DELETE FROM records WHERE collection = ?", arguments: [name])
            return self.rows.withLock { Array(0..<$0.count) }
        }, committed: { indexes in
            self.apply { $0.remove(at: indexes) }
            return .integer(Int64(indexes.count))
        })
    }

    // MARK: Catching up

    /// Re-reads the collection (another process wrote to the database) and reports what changed.
    /// Runs on the writer queue.
    func catchUp(_ db: Database) throws {
        let fresh = try Self.load(name, db)
        apply { $0.replaceAll(with: fresh) }
    }

    /// The records of collection `name`, sorted by id.
    static func load(_ name: String, _ db: Database) throws -> [(id: Int64, record: Value)] {
        var loaded: [(id: Int64, record: Value)] = []
        let rows = try Row.fetchCursor(db, sql: "SELECT id, data FROM records WHERE collection = ? ORDER BY id",
                                       arguments: [name])
        while let row = try rows.next() {
            let id: Int64 = row[0]
            let text: String = row[1]
            // A row another program wrote that is not a JSON object still shows, with its text.
            guard case .object(var fields) = try? Value(jsonText: text) else {
                loaded.append((id, .object(["id": .integer(id), "data": .string(text)])))
                continue
            }
            fields["id"] = .integer(id)
            loaded.append((id, .object(fields)))
        }
        return loaded
    }

    // MARK: Reporting

    /// Changes the rows and reports the result: `items`, `count`, then `didChange`. Called on
    /// the writer queue only, so reports leave in commit order.
    private func apply(_ change: (inout CollectionRows) -> ChangeSet) {
        let (changeSet, snapshot) = rows.withLock { rows in (change(&rows), rows.records) }
        guard !changeSet.isEmpty else { return }
        changes.propertyChanged("items", to: .array(snapshot))
        changes.propertyChanged("count", to: .integer(Int64(snapshot.count)))
        changes.emit("didChange", changeSet.value)
    }

    private func notFound(_ id: Int64) -> ServiceError {
        ServiceError(.notFound, "no record with id \(id) in collection '\(name)'")
    }
}
