public import Model

/// One named collection of a store: an ordered list of JSON-shaped records kept in the store's
/// backend (SQLite or PostgreSQL), with the list in memory for `items`, `count`, `get`, `page`
/// and `find`.
///
/// Every write is one transaction; once it commits, the list in memory changes and the
/// collection reports `items`, `count` and `didChange` (a ``ChangeSet``) from the backend's one
/// serial context, so reports go out in commit order. Writes by other processes or hosts arrive
/// the same way, as exact change sets (see ``StoreBackend``).
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
    public let changes: ChangePublisher
    public var interface: AnyInterface { Self.declaration }
    /// Records are JSON data: a field stored as null reads back as `json.null`.
    public var handsOutJSONData: Bool { true }

    let backend: any StoreBackend
    /// The records in memory, which publish `items`, `count` and `didChange`; changed only by
    /// the backend, through ``apply(_:)``.
    let rows: ObservableCollection<CollectionRows>

    init(name: String, rows: CollectionRows, backend: any StoreBackend) {
        self.name = name
        let changes = ChangePublisher()
        self.changes = changes
        self.rows = ObservableCollection(rows, reportingTo: changes)
        self.backend = backend
    }

    /// The records, in insertion order, each with its `id`.
    public var items: [Value] { rows.items }
    /// How many records there are.
    public var count: Int { rows.count }

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

    // MARK: Writing (through the backend)

    /// Stores one record or an array of records; returns the stored record(s) with their new
    /// `id`. An `id` field given in a record is replaced. Nothing is written when any record is
    /// invalid.
    public func add(_ recordOrRecords: Value) throws(ServiceError) -> Value {
        try backend.write(try Self.addition(recordOrRecords), to: self)
    }

    /// Sets `fields` on the record with `id` (other fields stay) and returns the record. On
    /// PostgreSQL, a record another host changed since this one last read it answers `conflict`.
    public func update(_ id: Int64, fields: Value) throws(ServiceError) -> Value {
        try backend.write(try Self.update(id, setting: fields), to: self)
    }

    /// Removes the records with the given ids (one id or an array); returns how many. When any
    /// id is unknown, nothing is removed (`not_found`).
    public func remove(_ idOrIDs: Value) throws(ServiceError) -> Value {
        try backend.write(Self.removal(idOrIDs), to: self)
    }

    /// Removes every record; returns how many there were.
    public func clear() throws(ServiceError) -> Value {
        try backend.write(.clear, to: self)
    }

    // MARK: Writing for scripts

    /// `add` answering through `reply` (see ``StoreBackend/write(size:_:to:reply:)``).
    func add(_ recordOrRecords: Value, reply: Reply) {
        backend.write(size: WriteWeight.of(recordOrRecords, rows: recordOrRecords.arrayValue?.count ?? 1), { () throws(ServiceError) in
            try Self.addition(recordOrRecords)
        }, to: self, reply: reply)
    }

    /// `update` answering through `reply`.
    func update(_ id: Int64, fields: Value, reply: Reply) {
        backend.write(size: WriteWeight.of(fields, rows: 1), { () throws(ServiceError) in try Self.update(id, setting: fields) },
                      to: self, reply: reply)
    }

    /// `remove` answering through `reply`.
    func remove(_ idOrIDs: Value, reply: Reply) {
        backend.write(size: idOrIDs.arrayValue?.count ?? 1, { () throws(ServiceError) in Self.removal(idOrIDs) }, to: self, reply: reply)
    }

    /// `clear` answering through `reply`.
    func clear(reply: Reply) {
        backend.write(size: count, { () throws(ServiceError) in .clear }, to: self, reply: reply)
    }

    // MARK: Checking writes

    /// The records to add, checked, without their `id`.
    private static func addition(_ recordOrRecords: Value) throws(ServiceError) -> StoreOperation {
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
        var prepared: [Fields] = []
        prepared.reserveCapacity(given.count)
        for (index, value) in given.enumerated() {
            var fields = try RecordValidator.record(value, path: single ? "record" : "records[\(index + 1)]")
            fields["id"] = nil
            prepared.append(fields)
        }
        return .add(prepared, single: single)
    }

    /// The fields to set, checked, without `id` (which may be given but not changed).
    private static func update(_ id: Int64, setting fields: Value) throws(ServiceError) -> StoreOperation {
        var changes = try RecordValidator.record(fields, path: "fields")
        if let given = changes["id"] {
            guard RecordQuery.equal(given, .integer(id)) else {
                throw ServiceError(.invalidArgument, "fields.id cannot change (the record's id is \(id))")
            }
            changes["id"] = nil
        }
        return .update(id, fields: changes)
    }

    /// The ids to remove, sorted and unique.
    private static func removal(_ idOrIDs: Value) -> StoreOperation {
        switch idOrIDs {
        case .array(let items): .remove(Array(Set(items.compactMap(\.integerValue))).sorted())
        default: .remove(idOrIDs.integerValue.map { [$0] } ?? [])
        }
    }

    // MARK: Loading

    /// Records read from a database row: the JSON object with its `id` (a row another program
    /// wrote that is not a JSON object still shows, with its text).
    static func record(id: Int64, json text: String) -> Value {
        guard case .object(var fields) = try? Value(jsonText: text) else {
            return .object(["id": .integer(id), "data": .string(text)])
        }
        fields["id"] = .integer(id)
        return .object(fields)
    }

    // MARK: Reporting

    /// Changes the rows and reports the result: `items`, `count`, then `didChange` (see
    /// ``ObservableCollection/apply(_:)``). Called from the backend's one serial context.
    func apply(_ change: (inout CollectionRows) -> ChangeSet) {
        rows.apply(change)
    }

    func notFound(_ id: Int64) -> ServiceError {
        ServiceError(.notFound, "no record with id \(id) in collection '\(name)'")
    }
}
