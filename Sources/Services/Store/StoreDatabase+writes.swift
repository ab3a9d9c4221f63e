import GRDB
import Model
import Synchronization

/// The three ways a write runs. Each is one IMMEDIATE transaction on the writer connection that
/// first catches up with other processes; `committed` runs right after the commit, still holding
/// the writer, so what it reports goes out in commit order. A ``ServiceError`` thrown by `change`
/// rolls the transaction back; a database error becomes `io` (or `unavailable` when another
/// process keeps the database locked).
///
/// - ``write(_:)`` blocks until done (Swift callers, the session).
/// - ``writeIfImmediate(_:)`` runs on the calling thread (the host's loop) only
///   when nothing can make it wait: a small write, no queued write ahead of it, the writer idle,
///   SQLite's lock free, nothing new from other processes, commits that do not sync the disk.
///   Otherwise it writes nothing and returns nil.
/// - ``writeLater(_:unlessCancelled:done:)`` queues the write on GRDB's serial writer
///   queue (no Swift task), opening the database first off the calling thread when needed, and
///   calls `done` there.
extension StoreDatabase {
    /// At most this many rows for a write on the loop: well under a millisecond of work.
    static let immediateRowLimit = 64

    /// Runs `write` now, blocking until the database is free.
    func write<Change, Output>(_ write: StoreWrite<Change, Output>) throws(ServiceError) -> Output {
        try self.write(write.change, committed: write.committed)
    }

    /// Runs `change` and `committed` now, blocking until the database is free.
    func write<Change, Output>(_ change: (Database) throws -> Change,
                               committed: (Change) -> Output) throws(ServiceError) -> Output {
        let writer = try writer()
        writerUsers.add(1, ordering: .acquiringAndReleasing)
        defer { writerUsers.subtract(1, ordering: .acquiringAndReleasing) }
        return try mapErrors {
            try writer.writeWithoutTransaction { db in try waitingTransaction(db, change, committed: committed) }
        }
    }

    /// Runs `write` here and now when it cannot wait for anything (see the type's
    /// documentation); nil when it did not run.
    ///
    /// - Parameter mayCommit: asked just before the commit; false rolls the write back and
    ///   answers `cancelled` (the caller cancelled before the write took effect).
    func writeIfImmediate<Change, Output>(_ write: StoreWrite<Change, Output>,
                                          mayCommit: @Sendable () -> Bool = { true }) -> Result<Output, ServiceError>? {
        guard write.size <= Self.immediateRowLimit, settings.synchronous == .normal,
              queuedWrites.load(ordering: .acquiring) == 0, let writer = openWriter else { return nil }
        writerUsers.add(1, ordering: .acquiringAndReleasing)
        defer { writerUsers.subtract(1, ordering: .acquiringAndReleasing) }
        // Another block on the writer queue (the poller, a Swift caller) would make us wait.
        guard writerUsers.load(ordering: .acquiring) == 1 else { return nil }
        do throws(ServiceError) {
            return try mapErrors {
                try writer.writeWithoutTransaction { db -> Result<Output, ServiceError>? in
                    do {
                        return try transaction(db, write.change, committed: write.committed, waiting: false, mayCommit: mayCommit)
                            .map { .success($0) }
                    } catch let error as ServiceError {
                        return .failure(error)
                    }
                }
            }
        } catch {
            return .failure(error)
        }
    }

    /// Queues a write on the writer queue and calls `done` there with its outcome. The write is
    /// made there by `prepare` (checking and encoding a large batch is work too); one whose caller
    /// cancelled before it started does not run (`done` gets `cancelled`), and one cancelled
    /// while it ran is rolled back unless `mayCommit` lets it commit.
    func writeLater<Change, Output>(_ prepare: @escaping @Sendable () throws(ServiceError) -> StoreWrite<Change, Output>,
                                    unlessCancelled isCancelled: @escaping @Sendable () -> Bool,
                                    mayCommit: @escaping @Sendable () -> Bool = { true },
                                    done: @escaping @Sendable (Result<Output, ServiceError>) -> Void) {
        enqueueOpening { opened in
            guard !isCancelled() else {
                done(.failure(ServiceError(.cancelled, "the request was cancelled")))
                return
            }
            do throws(ServiceError) {
                let db = try opened.get()
                let write = try prepare()
                done(.success(try self.mapErrors {
                    try self.waitingTransaction(db, write.change, committed: write.committed, mayCommit: mayCommit)
                }))
            } catch {
                done(.failure(error))
            }
        }
    }

    // MARK: One transaction

    /// A transaction that waits for other processes' locks and catches up with their commits.
    private func waitingTransaction<Change, Output>(_ db: Database, _ change: (Database) throws -> Change,
                                                    committed: (Change) -> Output,
                                                    mayCommit: () -> Bool = { true }) throws -> Output {
        guard let output = try transaction(db, change, committed: committed, waiting: true, mayCommit: mayCommit) else {
            // Unreachable: only a transaction that may not wait gives up.
            throw ServiceError(.internal, "a store write gave up without waiting")
        }
        return output
    }

    /// One IMMEDIATE transaction on the writer connection: begin, catch up with other processes,
    /// change, commit, then `committed`. Anything thrown rolls it back. Call on the writer queue.
    ///
    /// - Parameter waiting: false to give up (nil, nothing written) rather than wait for another
    ///   process's lock or read what other processes committed.
    private func transaction<Change, Output>(_ db: Database, _ change: (Database) throws -> Change,
                                             committed: (Change) -> Output, waiting: Bool,
                                             mayCommit: () -> Bool) throws -> Output? {
        try waitForLocks(waiting, db)
        // Cached statements: GRDB's beginTransaction and commit compile their SQL every time.
        do {
            try db.cachedStatement(sql: "BEGIN IMMEDIATE").execute()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && !waiting {
            return nil                                               // another process is writing
        }
        var finished = false
        defer { if !finished { try? db.rollback() } }
        if waiting {
            try catchUp(db)
        } else if try versionAfterOtherCommits(db) != nil {
            return nil                                               // it may be a lot to read
        }
        let result = try change(db)
        // The last moment a cancel can stop the write: after it, the write has taken effect.
        guard mayCommit() else { throw ServiceError(.cancelled, "the request was cancelled") }
        // Never acknowledge a write that would not be in the file at the store's path.
        try checkFileAtPath()
        try db.cachedStatement(sql: "COMMIT").execute()
        finished = true
        return committed(result)
    }

    /// Throws when the store file was removed or replaced since it was opened (`rm`, a restore
    /// that renames a copy over it): a commit would then go to a file that no process can open
    /// again and be lost at exit, so the write fails instead, naming the file and the fix. One
    /// `stat` (about a microsecond); call before each commit.
    ///
    /// Its write-ahead log likewise (harden4 H3): commits go to the log first, and one written
    /// into a deleted log is lost when the process ends (and no other process sees it), so a log
    /// removed or replaced fails the write the same way. A second `stat`.
    func checkFileAtPath() throws(ServiceError) {
        guard case .file(let path) = settings.location, let opened = openedFile.withLock({ $0 }) else { return }
        let now = DatabaseLocation.identity(of: path)
        if now != opened {
            let what = now == nil ? "was removed" : "was replaced by another file"
            throw ServiceError(.io, "the store database \(path) \(what) while this process had it open: nothing was written, since the write would go to the old file that no process can open again; restart crescent to use the file now at that path")
        }
        guard let log = openedLog.withLock({ $0 }) else { return }
        let logNow = DatabaseLocation.identity(of: path + "-wal")
        guard logNow != log else { return }
        let what = logNow == nil ? "was removed" : "was replaced by another file"
        throw ServiceError(.io, "the store database's write-ahead log \(path)-wal \(what) while this process had it open: nothing was written, since the write would go to a log that no process can read again (what was written since it was removed is lost with it); restart crescent")
    }

    // MARK: Checkpoints

    /// A log this many frames long is checkpointed (SQLite's own default).
    static let checkpointFrames = 1_000

    /// Called by SQLite after each commit with the length of the write-ahead log: past
    /// ``checkpointFrames``, queues a PASSIVE checkpoint on the writer queue.
    ///
    /// The store's connections do not checkpoint inside their commits, since those may run on the
    /// host's loop and a checkpoint syncs the disk. Queued like a write, the checkpoint makes the
    /// writes after it wait on the writer queue, not on the loop, and runs between two writes, so
    /// the next one starts the log over, as after SQLite's own checkpoints.
    func logGrew(to frames: Int) {
        guard frames >= Self.checkpointFrames, let writer = openWriter,
              !checkpointQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        enqueue(on: writer) { db in
            defer { self.checkpointQueued.store(false, ordering: .releasing) }
            // A checkpoint that cannot finish (another process reading) leaves the rest for the
            // next one.
            _ = try? db.checkpoint(.passive)
        }
    }

    /// Queues `body` on the writer queue, counted as a queued write until it has run: no write
    /// runs on the loop ahead of it, nor waits there for it.
    func enqueue(on writer: any DatabaseWriter, _ body: @escaping @Sendable (Database) -> Void) {
        queuedWrites.add(1, ordering: .acquiringAndReleasing)
        writer.asyncWriteWithoutTransaction { db in
            self.writerUsers.add(1, ordering: .acquiringAndReleasing)
            defer {
                self.writerUsers.subtract(1, ordering: .acquiringAndReleasing)
                self.queuedWrites.subtract(1, ordering: .acquiringAndReleasing)
            }
            body(db)
        }
    }

    /// Makes the writer connection wait for other processes' locks (up to
    /// ``lockTimeoutMilliseconds``), or fail at once with SQLITE_BUSY. Call on the writer queue.
    private func waitForLocks(_ wait: Bool, _ db: Database) throws {
        guard waitsForLocks.withLock({ $0 }) != wait else { return }
        try db.execute(sql: "PRAGMA busy_timeout = \(wait ? Self.lockTimeoutMilliseconds : 0)")
        waitsForLocks.withLock { $0 = wait }
    }
}
