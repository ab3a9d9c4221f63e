import Model
import Synchronization
import PostgresNIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Each ``StoreOperation`` as one statement, in a transaction of its own, that writes the records
/// and their change-log rows together (on the queue): one round trip, where BEGIN and COMMIT
/// would add two. The collection's rows change only when the log is read back, so this host
/// shows its own writes exactly as every other host does.
///
/// A write answers success only once the log has been read past it and the server says its
/// transaction committed: a commit that fails after the statement's rows came back (the server
/// reports it after them) is never acknowledged.
extension PostgresBackend {
    /// Runs `operation`, then reads the log until it has passed the write, so the collection
    /// shows it when the write answers.
    ///
    /// - Parameter mayCommit: asked just before the statement is sent, the last moment a cancel
    ///   can stop the write; false answers `cancelled` with nothing written.
    func perform(_ operation: StoreOperation, on collection: StoreCollection,
                 mayCommit: () -> Bool = { true }) throws(ServiceError) -> Value {
        let output: Value, xid: Int64?
        switch operation {
        case .add(let records, let single): (output, xid) = try add(records, single: single, to: collection, mayCommit)
        case .update(let id, let fields): (output, xid) = try update(id, setting: fields, in: collection, mayCommit)
        case .remove(let ids): (output, xid) = try remove(ids, from: collection, mayCommit)
        case .clear: (output, xid) = try clear(collection, mayCommit)
        }
        if let xid { try waitUntilRead(xid) }
        return output
    }

    /// Runs the one statement of a write, unless the caller cancelled first.
    private func write(_ query: PostgresQuery, doing: String, _ mayCommit: () -> Bool) throws(ServiceError) -> PostgresQueryResult {
        // Sent, the statement commits on its own: a cancel after this point no longer cancels.
        guard mayCommit() else { throw ServiceError(.cancelled, "the request was cancelled") }
        return try run(query, doing: doing)
    }

    private func add(_ records: [[String: Value]], single: Bool, to collection: StoreCollection,
                     _ mayCommit: () -> Bool) throws(ServiceError) -> (Value, Int64?) {
        guard !records.isEmpty else { return (single ? .null : .array([]), nil) }
        let name = collection.name
        let texts = records.map { Value.object($0).jsonText }
        let result = try write("""
            WITH added AS (
                INSERT INTO crescent_records (collection, data)
                SELECT \(name), record FROM unnest(\(texts)::text[]::jsonb[]) WITH ORDINALITY AS given(record, position)
                ORDER BY position
                RETURNING id, version, data
            ), logged AS (
                INSERT INTO crescent_changes (collection, kind, record_id, version, data)
                SELECT \(name), 'i', id, version, data FROM added ORDER BY id
            )
            SELECT id, pg_current_xact_id()::text::bigint FROM added ORDER BY id
            """, doing: "adding to '\(name)'", mayCommit)
        var ids: [Int64] = []
        var xid: Int64?
        for row in result {
            let (id, transaction) = try decode { try row.decode((Int64, Int64).self) }
            ids.append(id)
            xid = transaction
        }
        guard ids.count == records.count else {
            throw ServiceError(.internal, "\(failure.target) stored \(ids.count) of \(records.count) records")
        }
        let stored = zip(ids, records).map { id, fields in
            var fields = fields
            fields["id"] = .integer(id)
            return Value.object(fields)
        }
        return (single ? stored[0] : .array(stored), xid)
    }

    private func update(_ id: Int64, setting newFields: [String: Value], in collection: StoreCollection,
                        _ mayCommit: () -> Bool) throws(ServiceError) -> (Value, Int64?) {
        let name = collection.name
        guard let existing = collection.rows.withLock({ $0.record(id) }), case .object(let fields) = existing,
              let version = follows.withLock({ $0[name]?.versions[id] }) else {
            throw collection.notFound(id)
        }
        var record = fields
        record.merge(newFields) { _, new in new }
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
            """, doing: "updating '\(name)'", mayCommit)
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
                        _ mayCommit: () -> Bool) throws(ServiceError) -> (Value, Int64?) {
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
            """, doing: "removing from '\(name)'", mayCommit)
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

    private func clear(_ collection: StoreCollection, _ mayCommit: () -> Bool) throws(ServiceError) -> (Value, Int64?) {
        let name = collection.name
        let result = try write("""
            WITH removed AS (
                DELETE FROM crescent_records WHERE collection = \(name) RETURNING id, version
            ), logged AS (
                INSERT INTO crescent_changes (collection, kind, record_id, version)
                SELECT \(name), 'd', id, version FROM removed
            )
            SELECT pg_current_xact_id()::text::bigint FROM removed
            """, doing: "clearing '\(name)'", mayCommit)
        var count: Int64 = 0
        var xid: Int64?
        for row in result {
            xid = try decode { try row.decode(Int64.self) }
            count += 1
        }
        return (.integer(count), xid)
    }

    /// Catches up until the log has been read past transaction `xid` (another transaction that
    /// began before it and is still open holds it back), and fails unless `xid` committed. Once
    /// it is known to have committed, the write answers success even if the log stays held back
    /// for more than a few seconds; its change then arrives with a later catch-up.
    private func waitUntilRead(_ xid: Int64) throws(ServiceError) {
        var pause: UInt32 = 200
        for _ in 0..<250 {
            switch try catchUp(confirming: xid) {
            case "committed"?:
                if catchUpSuspended.load(ordering: .acquiring) { return }
                if let cursor = cursor.withLock({ $0 }), cursor > xid { return }
            case "in progress"?:
                break
            default:
                throw ServiceError(.io, "\(failure.target) did not commit the write: nothing was written")
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
