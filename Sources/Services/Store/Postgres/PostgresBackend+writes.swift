import Model
import Synchronization
import PostgresNIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Each ``StoreOperation`` as one transaction writing the records and their change-log rows
/// together (on the queue). The collection's rows change only when the log is read back, so this
/// host shows its own writes exactly as every other host does.
extension PostgresBackend {
    /// Runs `operation`, then reads the log until it has passed the write, so the collection
    /// shows it when the write answers.
    func perform(_ operation: StoreOperation, on collection: StoreCollection) throws(ServiceError) -> Value {
        let output: Value, xid: Int64?
        switch operation {
        case .add(let records, let single): (output, xid) = try add(records, single: single, to: collection)
        case .update(let id, let fields): (output, xid) = try update(id, setting: fields, in: collection)
        case .remove(let ids): (output, xid) = try remove(ids, from: collection)
        case .clear: (output, xid) = try clear(collection)
        }
        if let xid { waitUntilRead(xid) }
        return output
    }

    private func add(_ records: [[String: Value]], single: Bool, to collection: StoreCollection) throws(ServiceError) -> (Value, Int64?) {
        guard !records.isEmpty else { return (single ? .null : .array([]), nil) }
        let name = collection.name
        let texts = records.map { Value.object($0).jsonText }
        let result = try transaction(doing: "adding to '\(name)'") { () throws(ServiceError) in
            try run("""
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
                """, doing: "adding to '\(name)'")
        }
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

    private func update(_ id: Int64, setting newFields: [String: Value], in collection: StoreCollection) throws(ServiceError) -> (Value, Int64?) {
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
        let xid = try transaction(doing: "updating '\(name)'") { () throws(ServiceError) -> Int64? in
            let result = try run("""
                WITH changed AS (
                    UPDATE crescent_records SET data = \(text)::jsonb, version = version + 1
                    WHERE collection = \(name) AND id = \(id) AND version = \(version)
                    RETURNING id, version, data
                ), logged AS (
                    INSERT INTO crescent_changes (collection, kind, record_id, version, data)
                    SELECT \(name), 'u', id, version, data FROM changed
                )
                SELECT pg_current_xact_id()::text::bigint FROM changed
                """, doing: "updating '\(name)'")
            for row in result { return try decode { try row.decode(Int64.self) } }
            // Not at the version this host has: changed or removed by another host meanwhile.
            let current = try run("SELECT version FROM crescent_records WHERE collection = \(name) AND id = \(id)",
                                  doing: "updating '\(name)'")
            guard current.rows.isEmpty else {
                throw ServiceError(.conflict, "record \(id) of collection '\(name)' was changed by another host since this one read it: nothing was written; read it again and retry")
            }
            throw collection.notFound(id)
        }
        record["id"] = .integer(id)
        return (.object(record), xid)
    }

    private func remove(_ ids: [Int64], from collection: StoreCollection) throws(ServiceError) -> (Value, Int64?) {
        guard !ids.isEmpty else { return (.integer(0), nil) }
        let name = collection.name
        if let unknown = collection.rows.withLock({ rows in ids.first { rows.index(of: $0) == nil } }) {
            throw collection.notFound(unknown)
        }
        let xid = try transaction(doing: "removing from '\(name)'") { () throws(ServiceError) -> Int64? in
            let result = try run("""
                WITH removed AS (
                    DELETE FROM crescent_records WHERE collection = \(name) AND id = ANY(\(ids))
                    RETURNING id, version
                ), logged AS (
                    INSERT INTO crescent_changes (collection, kind, record_id, version)
                    SELECT \(name), 'd', id, version FROM removed
                )
                SELECT id, pg_current_xact_id()::text::bigint FROM removed
                """, doing: "removing from '\(name)'")
            var removed = Set<Int64>()
            var xid: Int64?
            for row in result {
                let (id, transaction) = try decode { try row.decode((Int64, Int64).self) }
                removed.insert(id)
                xid = transaction
            }
            // Another host removed one first: all or nothing.
            if let missing = ids.first(where: { !removed.contains($0) }) { throw collection.notFound(missing) }
            return xid
        }
        return (.integer(Int64(ids.count)), xid)
    }

    private func clear(_ collection: StoreCollection) throws(ServiceError) -> (Value, Int64?) {
        let name = collection.name
        let result = try transaction(doing: "clearing '\(name)'") { () throws(ServiceError) in
            try run("""
                WITH removed AS (
                    DELETE FROM crescent_records WHERE collection = \(name) RETURNING id, version
                ), logged AS (
                    INSERT INTO crescent_changes (collection, kind, record_id, version)
                    SELECT \(name), 'd', id, version FROM removed
                )
                SELECT pg_current_xact_id()::text::bigint FROM removed
                """, doing: "clearing '\(name)'")
        }
        var count: Int64 = 0
        var xid: Int64?
        for row in result {
            xid = try decode { try row.decode(Int64.self) }
            count += 1
        }
        return (.integer(count), xid)
    }

    /// Catches up until the log has been read past transaction `xid` (another transaction that
    /// began before it and is still open holds it back). A write that committed answers success
    /// even if that takes more than a few seconds; its change then arrives with a later catch-up.
    private func waitUntilRead(_ xid: Int64) {
        var pause: UInt32 = 200
        for _ in 0..<250 {
            do {
                try catchUp()
            } catch {
                return
            }
            if let cursor = cursor.withLock({ $0 }), cursor > xid { return }
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
