import Model
import Synchronization
import PostgresNIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Each ``StoreOperation`` as one statement, in a transaction of its own, that writes the records
/// and their change-log rows together (on the queue), with a read of the log sent right behind
/// it: the two leave without waiting for each other, where BEGIN and COMMIT would add two round
/// trips. The collection's rows change only when the log is read back, so this host shows its
/// own writes exactly as every other host does.
///
/// A write answers success only once the log has been read past it and its own rows were found
/// there (or the server says its transaction committed): a commit that fails after the
/// statement's rows came back (the server reports it after them) is never acknowledged.
extension PostgresBackend {
    /// Runs `operation`, then reads the log until it has passed the write, so the collection
    /// shows it when the write answers.
    ///
    /// - Parameter mayCommit: asked just before the statement is sent, the last moment a cancel
    ///   can stop the write; false answers `cancelled` with nothing written.
    func perform(_ operation: StoreOperation, on collection: StoreCollection,
                 mayCommit: () -> Bool = { true }) throws(ServiceError) -> Value {
        let output: Value, xid: Int64?
        var read: LogRead?
        // The log as the write's own call read it after committing (an add's).
        var reading: LogReading?
        // A collection whose first load gave up on a lock is read first (the write waits for
        // that lock anyway), so that when the write answers the collection shows it.
        try loadIfNeeded(collection)
        do throws(ServiceError) {
            switch operation {
            case .add(let records, let single) where !records.isEmpty:
                if let start = startLogRead() {
                    (output, xid, reading) = try addThenRead(records, single: single, to: collection, reading: start, mayCommit)
                } else {
                    (output, xid) = try add(records, single: single, to: collection, mayCommit, &read)
                }
            case .add(_, let single): (output, xid) = (single ? .null : .array([]), nil)
            case .update(let id, let fields): (output, xid) = try update(id, setting: fields, in: collection, mayCommit, &read)
            case .remove(let ids): (output, xid) = try remove(ids, from: collection, mayCommit, &read)
            case .clear: (output, xid) = try clear(collection, mayCommit, &read)
            }
        } catch {
            // The read that followed is a catch-up like any other.
            if let read { _ = try? absorb(read) }
            throw error
        }
        if let xid {
            if reading == nil, let read { reading = try absorb(read) }
            try confirm(xid, after: reading)
        } else if let read {
            _ = try? absorb(read)
        }
        return output
    }

    /// Sends the one statement of a write, unless the caller cancelled first, and a read of the
    /// log right behind it (into `read`), and waits for the statement's rows.
    private func write(_ query: PostgresQuery, doing: String, _ mayCommit: () -> Bool,
                       _ read: inout LogRead?) throws(ServiceError) -> PostgresQueryResult {
        // Sent, the statement commits on its own: a cancel after this point no longer cancels.
        guard mayCommit() else { throw ServiceError(.cancelled, "the request was cancelled") }
        let written = try send(query, doing: doing)
        read = try sendLogRead()
        return try written.rows()
    }

    private func add(_ records: [Fields], single: Bool, to collection: StoreCollection,
                     _ mayCommit: () -> Bool, _ read: inout LogRead?) throws(ServiceError) -> (Value, Int64?) {
        let name = collection.name
        let texts = records.map { Value.object($0).jsonText }
        let result = try write("SELECT added_id, added_xid FROM pg_temp.crescent_add(\(name), \(texts))",
                               doing: "adding to '\(name)'", mayCommit, &read)
        var ids: [Int64] = []
        var xid: Int64?
        for row in result {
            let (id, transaction) = try decode { try row.decode((Int64, Int64).self) }
            ids.append(id)
            xid = transaction
        }
        return (try added(records, ids: ids, single: single), xid)
    }

    /// An add and the read of the log after its commit in one round trip, through the
    /// connection's prepared call of ``PostgresSessionFunctions/addThenRead``: `start` is where
    /// the read begins and the collections it reads (``startLogRead()``).
    private func addThenRead(_ records: [Fields], single: Bool, to collection: StoreCollection,
                             reading start: (from: PostgresSnapshot, names: [String]), _ mayCommit: () -> Bool)
        throws(ServiceError) -> (Value, Int64?, LogReading) {
        let name = collection.name
        let doing = "adding to '\(name)'"
        guard mayCommit() else { throw ServiceError(.cancelled, "the request was cancelled") }
        let session = try session()
        let binds: [PostgresData] = [
            PostgresData(string: name),
            PostgresData(array: records.map { PostgresData(string: Value.object($0).jsonText) }, elementType: .text),
            PostgresData(string: start.from.text),
            PostgresData(array: start.names.map { PostgresData(string: $0) }, elementType: .text),
        ]
        // Sent, the call commits on its own: a cancel after this point no longer cancels.
        let rows = try wait(for: session.addThenRead.execute(binds), on: session.connection, doing: doing)
        // The server sends every column in binary, as PostgresNIO's Bind asks, but a PreparedQuery's
        // rows carry the formats described when the statement was parsed (text): read as sent.
        let cells: [PostgresCell] = rows.first.map { row in
            row.map { cell in
                var cell = cell
                cell.format = .binary
                return cell
            }
        } ?? []
        guard cells.count == 10 else { throw ServiceError(.io, "\(failure.target) answered \(doing) with no row this crescent can read") }
        let (ids, xid, seen, compacted, xids, names, kinds, recordIDs, versions, data) = try decode {
            (try cells[0].decode([Int64].self), try cells[1].decode(Int64.self), try cells[2].decode(String.self),
             try cells[3].decode(Int64.self), try cells[4].decode([Int64].self), try cells[5].decode([String].self),
             try cells[6].decode([String].self), try cells[7].decode([Int64].self), try cells[8].decode([Int64].self),
             try cells[9].decode([String].self))
        }
        guard [names.count, kinds.count, recordIDs.count, versions.count, data.count].allSatisfy({ $0 == xids.count }) else {
            throw ServiceError(.io, "\(failure.target) answered a change log this crescent cannot read")
        }
        let changes = xids.indices.map { index in
            LoggedChange(xid: xids[index], collection: names[index], kind: kinds[index], id: recordIDs[index],
                         version: versions[index], data: kinds[index] == "d" ? nil : data[index])
        }
        let output = try added(records, ids: ids, single: single)
        let reading = try absorb(changes, from: start.from, reading: LogReading(status: "committed", seen: try snapshot(seen)), compacted: compacted)
        return (output, xid, reading)
    }

    /// The added records with their new ids, as the add answers them.
    private func added(_ records: [Fields], ids: [Int64], single: Bool) throws(ServiceError) -> Value {
        guard ids.count == records.count else {
            throw ServiceError(.internal, "\(failure.target) stored \(ids.count) of \(records.count) records")
        }
        let stored = zip(ids, records).map { id, fields in
            var fields = fields
            fields["id"] = .integer(id)
            return Value.object(fields)
        }
        return single ? stored[0] : .array(stored)
    }

    private func update(_ id: Int64, setting newFields: Fields, in collection: StoreCollection,
                        _ mayCommit: () -> Bool, _ read: inout LogRead?) throws(ServiceError) -> (Value, Int64?) {
        let name = collection.name
        guard let existing = collection.rows.withLock({ $0.record(id) }), case .object(let fields) = existing,
              let version = follows.withLock({ $0[name]?.versions[id] }) else {
            throw collection.notFound(id)
        }
        var record = fields
        record.merge(newFields)
        // Nothing to write or report when no field changes.
        if record == fields { return (existing, nil) }
        record["id"] = nil
        let text = Value.object(record).jsonText
        // The last column tells a record changed by another host (present) from one removed.
        let result = try write("""
            WITH changed AS (
                UPDATE crescent_records SET data = \(text)::jsonb, version = version + 1
                WHERE collection = \(name) AND id = \(id) AND version = \(version)
                RETURNING id, version, data
            ), logged AS (
                INSERT INTO crescent_changes (collection, kind, record_id, version, data)
                SELECT \(name), 'u', id, version, data FROM changed
            )
            SELECT (SELECT pg_current_xact_id()::text::bigint FROM changed),
                   EXISTS (SELECT 1 FROM crescent_records WHERE collection = \(name) AND id = \(id))
            """, doing: "updating '\(name)'", mayCommit, &read)
        var xid: Int64?, present = false
        for row in result { (xid, present) = try decode { try row.decode((Int64?, Bool).self) } }
        guard let xid else {
            // Not at the version this host has: changed or removed by another host meanwhile.
            guard present else { throw collection.notFound(id) }
            throw ServiceError(.conflict, "record \(id) of collection '\(name)' was changed by another host since this one read it: nothing was written; read it again and retry")
        }
        record["id"] = .integer(id)
        return (.object(record), xid)
    }

    /// Deletes the records, all or none: the statement locks those present and deletes only
    /// when it found every one (another host may have removed one since this host read it).
    private func remove(_ ids: [Int64], from collection: StoreCollection,
                        _ mayCommit: () -> Bool, _ read: inout LogRead?) throws(ServiceError) -> (Value, Int64?) {
        guard !ids.isEmpty else { return (.integer(0), nil) }
        let name = collection.name
        if let unknown = collection.rows.withLock({ rows in ids.first { rows.index(of: $0) == nil } }) {
            throw collection.notFound(unknown)
        }
        let result = try write("""
            WITH present AS MATERIALIZED (
                SELECT id FROM crescent_records WHERE collection = \(name) AND id = ANY(\(ids)) FOR UPDATE
            ), removed AS (
                DELETE FROM crescent_records WHERE collection = \(name) AND id = ANY(\(ids))
                    AND (SELECT count(*) FROM present) = \(Int64(ids.count))
                RETURNING id, version
            ), logged AS (
                INSERT INTO crescent_changes (collection, kind, record_id, version)
                SELECT \(name), 'd', id, version FROM removed
            )
            SELECT id, (SELECT pg_current_xact_id()::text::bigint FROM removed LIMIT 1) FROM present
            """, doing: "removing from '\(name)'", mayCommit, &read)
        var found = Set<Int64>()
        var xid: Int64?
        for row in result {
            let (id, transaction) = try decode { try row.decode((Int64, Int64?).self) }
            found.insert(id)
            xid = transaction
        }
        if let missing = ids.first(where: { !found.contains($0) }) { throw collection.notFound(missing) }
        guard let xid else { throw ServiceError(.internal, "\(failure.target) removed none of \(ids.count) records it holds") }
        return (.integer(Int64(ids.count)), xid)
    }

    private func clear(_ collection: StoreCollection, _ mayCommit: () -> Bool,
                       _ read: inout LogRead?) throws(ServiceError) -> (Value, Int64?) {
        let name = collection.name
        let result = try write("""
            WITH removed AS (
                DELETE FROM crescent_records WHERE collection = \(name) RETURNING id, version
            ), logged AS (
                INSERT INTO crescent_changes (collection, kind, record_id, version)
                SELECT \(name), 'd', id, version FROM removed
            )
            SELECT pg_current_xact_id()::text::bigint FROM removed
            """, doing: "clearing '\(name)'", mayCommit, &read)
        var count: Int64 = 0
        var xid: Int64?
        for row in result {
            xid = try decode { try row.decode(Int64.self) }
            count += 1
        }
        return (.integer(count), xid)
    }

    /// Answers once the write of transaction `xid` is known to have committed and the log has
    /// been read past it: at once when `reading`, the read that followed the write, found the
    /// write's rows; an error when its snapshot saw `xid` finished without them.
    private func confirm(_ xid: Int64, after reading: LogReading?) throws(ServiceError) {
        if let reading {
            if reading.transactions.contains(xid) { return }
            if !reading.reloaded && reading.seen.sees(xid) { throw notCommitted }
        }
        try waitUntilRead(xid)
    }

    private var notCommitted: ServiceError {
        ServiceError(.io, "\(failure.target) did not commit the write: nothing was written")
    }

    /// Catches up until the log has been read past transaction `xid`, and fails unless `xid`
    /// committed. The read that follows a write normally settles it at once (transactions open
    /// elsewhere do not hold the read back); this loop serves when that read was lost or held
    /// back (a reconnection, catching up suspended). It gives up after about 5 s: the write
    /// committed, so it answers success, and its change arrives with a later catch-up.
    private func waitUntilRead(_ xid: Int64) throws(ServiceError) {
        var pause: UInt32 = 200
        for _ in 0..<250 {
            switch try catchUp(confirming: xid) {
            case "committed"?:
                if catchUpSuspended.load(ordering: .acquiring) { return }
                if let cursor = cursor.withLock({ $0 }), cursor.sees(xid) { return }
            case "in progress"?:
                break
            default:
                throw notCommitted
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// Runs a row decoding, turning its failure into an `io` error naming the database.
    func decode<Output>(_ body: () throws -> Output) throws(ServiceError) -> Output {
        do {
            return try body()
        } catch {
            throw ServiceError(.io, "\(failure.target) answered a row this crescent cannot read: \(error)")
        }
    }
}
