import Model
import Synchronization
import PostgresNIO

/// Reading the change log (on the queue): loads, catch-ups, reloads and compaction.
extension PostgresBackend {
    /// One row of the change log.
    struct LoggedChange {
        var xid: Int64
        var collection: String
        var kind: String
        var id: Int64
        var version: Int64
        var data: String?
    }

    /// The records of the collections `names` and their versions, read in one snapshot, which
    /// is returned too. The first load makes that snapshot the cursor.
    ///
    /// - Parameter lockTimeout: give up (``isLockTimeout(_:)``) rather than wait longer than
    ///   this for another session's lock on the records table (`LOCK TABLE`); nil waits.
    func load(_ names: [String], lockTimeout: Duration? = nil) throws(ServiceError)
        -> (rows: [String: [(id: Int64, record: Value)]], versions: [String: [Int64: Int64]], snapshot: PostgresSnapshot) {
        var rows: [String: [(id: Int64, record: Value)]] = [:]
        var versions: [String: [Int64: Int64]] = [:]
        let snapshot = try transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                                       doing: "reading collections") { () throws(ServiceError) -> PostgresSnapshot in
            if let lockTimeout {
                let milliseconds = max(1, lockTimeout.components.seconds * 1_000 + lockTimeout.components.attoseconds / 1_000_000_000_000_000)
                _ = try run("SET LOCAL lock_timeout = \(unescaped: String(milliseconds))", doing: "reading collections")
            }
            var snapshot: PostgresSnapshot?
            for row in try run("SELECT pg_current_snapshot()::text", doing: "reading collections") {
                snapshot = PostgresSnapshot(try decode { try row.decode(String.self) })
            }
            guard let snapshot else { throw ServiceError(.io, "\(failure.target) answered no snapshot") }
            let result = try run("""
                SELECT collection, id, version, data::text FROM crescent_records
                WHERE collection = ANY(\(names)) ORDER BY collection, id
                """, doing: "reading collections")
            for row in result {
                let (name, id, version, text) = try decode { try row.decode((String, Int64, Int64, String).self) }
                rows[name, default: []].append((id, StoreCollection.record(id: id, json: text)))
                versions[name, default: [:]][id] = version
            }
            return snapshot
        }
        cursor.withLock { cursor in if cursor == nil { cursor = snapshot } }
        return (rows, versions, snapshot)
    }

    /// A read of the change log on its way to the server (``sendLogRead(confirming:)``).
    struct LogRead {
        let from: PostgresSnapshot
        let query: SentQuery
    }

    /// What a read of the change log found (``absorb(_:)``).
    struct LogReading {
        /// `pg_xact_status` of the transaction the read was asked about, nil without one.
        var status: String?
        /// The transactions whose changes the read returned (committed, then).
        var transactions: Set<Int64> = []
        /// The snapshot the read was made in: every transaction it sees has been read.
        var seen: PostgresSnapshot
        /// The log had been compacted past the cursor: the collections were read again instead.
        var reloaded = false
    }

    /// Reads the log's transactions that committed since the cursor's snapshot and applies them,
    /// one change set per transaction and collection; reloads when the log was compacted past
    /// the cursor.
    ///
    /// - Parameter xid: a transaction of this host's whose outcome to learn in the same round trip.
    /// - Returns: `pg_xact_status` of `xid` ("committed", "aborted", "in progress"), nil without one.
    @discardableResult
    func catchUp(confirming xid: Int64? = nil) throws(ServiceError) -> String? {
        guard let read = try sendLogRead(confirming: xid) else {
            guard let xid else { return nil }
            return try transactionStatus(of: xid)
        }
        return try absorb(read).status
    }

    /// Where a read of the log starts and the collections it reads, or nil when catching up is
    /// held back or nothing has been loaded yet. Call just before sending the read: any
    /// notification that arrived before it is covered by it.
    func startLogRead() -> (from: PostgresSnapshot, names: [String])? {
        guard !catchUpSuspended.load(ordering: .acquiring), let from = cursor.withLock({ $0 }) else { return nil }
        catchUpsStarted.store(notifications.load(ordering: .acquiring), ordering: .releasing)
        let names = follows.withLock { follows in
            follows = follows.filter { $0.value.collection != nil }
            return Array(follows.keys)
        }
        return (from, names)
    }

    /// Sends a read of the log from the cursor without waiting for it, or nil when catching up
    /// is held back or nothing has been loaded yet. Sent right behind a write, it reaches the
    /// server as soon as the write has committed.
    func sendLogRead(confirming xid: Int64? = nil) throws(ServiceError) -> LogRead? {
        guard let (from, names) = startLogRead() else { return nil }
        let query = try send("""
            SELECT seen, compacted, status, xid, collection, kind, record_id, version, data
            FROM pg_temp.crescent_read_log(\(from.text), \(names), \(xid))
            """, doing: "reading its change log")
        return LogRead(from: from, query: query)
    }

    /// Waits for `read` and applies what it found (see ``catchUp(confirming:)``).
    func absorb(_ read: LogRead) throws(ServiceError) -> LogReading {
        var reading = LogReading(seen: read.from)
        var compacted: Int64 = 0
        var changes: [LoggedChange] = []
        for row in try read.query.rows() {
            let columns = try decode { try row.decode((String, Int64, String?, Int64?, String?, String?, Int64?, Int64?, String?).self) }
            reading.seen = try snapshot(columns.0)
            compacted = columns.1
            reading.status = columns.2
            guard let xid = columns.3, let name = columns.4, let kind = columns.5, let id = columns.6, let version = columns.7 else { continue }
            changes.append(LoggedChange(xid: xid, collection: name, kind: kind, id: id, version: version, data: columns.8))
        }
        return try absorb(changes, from: read.from, reading: reading, compacted: compacted)
    }

    /// Applies `changes`, the log read from `from` in `reading.seen` (see
    /// ``catchUp(confirming:)``), or reloads when the log had been compacted past `from`.
    func absorb(_ changes: [LoggedChange], from: PostgresSnapshot, reading: LogReading, compacted: Int64) throws(ServiceError) -> LogReading {
        var reading = reading
        for change in changes { reading.transactions.insert(change.xid) }
        // Compaction removes only transactions older than every one then open, so a cursor whose
        // oldest unseen transaction is at or past the horizon missed nothing.
        if from.xmin < compacted {
            try reload()
            return LogReading(status: reading.status, seen: reading.seen, reloaded: true)
        }
        var start = 0
        while start < changes.count {
            var end = start
            while end < changes.count && changes[end].xid == changes[start].xid { end += 1 }
            apply(changes[start..<end])
            start = end
        }
        let read = reading.seen
        cursor.withLock { $0 = read }
        follows.withLock { follows in
            for name in follows.keys where follows[name]?.loadedIn.map(read.seesAll(of:)) == true { follows[name]?.loadedIn = nil }
        }
        return reading
    }

    /// Parses a snapshot the server sent.
    func snapshot(_ text: String) throws(ServiceError) -> PostgresSnapshot {
        guard let snapshot = PostgresSnapshot(text) else { throw ServiceError(.io, "\(failure.target) answered a snapshot this crescent cannot read") }
        return snapshot
    }

    /// Whether transaction `xid` committed, when catching up is held back.
    private func transactionStatus(of xid: Int64) throws(ServiceError) -> String? {
        var status: String?
        for row in try run("SELECT pg_xact_status(\(xid)::text::xid8)", doing: "reading its change log") {
            status = try decode { try row.decode(String?.self) }
        }
        return status
    }

    /// Catches up, leaving errors to the next try (a lost connection is already being
    /// reconnected).
    func catchUpQuietly() {
        _ = try? catchUp()
    }

    /// Applies one transaction's changes, collection by collection, each as one change set.
    /// Idempotent: a record's insert is applied only when the record is absent, an update only
    /// when newer than the version held, a removal only when present; changes the collection's
    /// load already saw are skipped.
    private func apply(_ transaction: ArraySlice<LoggedChange>) {
        var names: [String] = []
        for change in transaction where !names.contains(change.collection) { names.append(change.collection) }
        for name in names {
            guard let (collection, loadedIn) = follows.withLock({ $0[name].flatMap { follow in follow.collection.map { ($0, follow.loadedIn) } } })
            else { continue }
            if let snapshot = loadedIn, let first = transaction.first, snapshot.sees(first.xid) { continue }
            // Not read yet (another session's lock held its first load up): its load reads this.
            guard collection.rows.withLock({ $0.isLoaded }) else { continue }
            // Taken out while changed, so the dictionary is changed in place rather than copied.
            var versions = follows.withLock { follows in
                defer { follows[name]?.versions = [:] }
                return follows[name]?.versions ?? [:]
            }
            collection.apply { rows in
                // Each record's state after the transaction, for those it changes.
                var changed: [Int64: Value?] = [:]
                for change in transaction where change.collection == name {
                    let present = changed[change.id].map { $0 != nil } ?? (rows.index(of: change.id) != nil)
                    switch change.kind {
                    case "i" where !present, "u" where present && change.version > (versions[change.id] ?? 0):
                        changed[change.id] = StoreCollection.record(id: change.id, json: change.data ?? "{}")
                        versions[change.id] = change.version
                    case "d" where present:
                        changed[change.id] = .some(nil)
                        versions[change.id] = nil
                    default:
                        break
                    }
                }
                return rows.merge(changed)
            }
            follows.withLock { $0[name]?.versions = versions }
        }
    }

    /// Reads every followed collection again (the log no longer holds what this host missed)
    /// and reports `reload = true`.
    func reload() throws(ServiceError) {
        let names = follows.withLock { Array($0.keys) }
        let loaded = try load(names)
        cursor.withLock { $0 = loaded.snapshot }
        for name in names {
            guard let collection = follows.withLock({ $0[name]?.collection }) else { continue }
            follows.withLock { follows in
                follows[name]?.versions = loaded.versions[name] ?? [:]
                follows[name]?.loadedIn = loaded.snapshot
            }
            collection.apply { rows in
                _ = rows.replaceAll(with: loaded.rows[name] ?? [])
                return .reload(rows.records)
            }
        }
    }

    /// Compacts the log now (see ``compact()``), from any thread.
    func compactNow() throws(ServiceError) {
        try onQueue { () throws(ServiceError) in try compact() }
    }

    /// Deletes change-log rows older than `[store] keep_changes` of transactions older than every
    /// one still open (a host may hold those in its cursor as in progress), and records the
    /// horizon below which the log is no longer whole. Call on the queue.
    func compact() throws(ServiceError) {
        let seconds = settings.keepChanges
        _ = try transaction(doing: "compacting its change log") { () throws(ServiceError) in
            try run("""
                WITH removed AS (
                    DELETE FROM crescent_changes WHERE at < now() - \(seconds) * interval '1 second'
                        AND xid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint RETURNING xid
                )
                INSERT INTO crescent_meta (key, value)
                SELECT 'compacted_below', max(xid) + 1 FROM removed HAVING count(*) > 0
                ON CONFLICT (key) DO UPDATE SET value = GREATEST(crescent_meta.value, EXCLUDED.value)
                """, doing: "compacting its change log")
        }
    }
}

