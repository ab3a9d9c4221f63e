import Dispatch
import GRDB
import GRDBSQLite
import Model
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The SQLite database behind the store and the session: one file in WAL mode through a GRDB
/// `DatabasePool` (or a private in-memory database), opened on first use.
///
/// Writes are one IMMEDIATE transaction each on the one writer connection, run in one of three
/// ways (see `StoreDatabase+writes.swift`): blocking on GRDB's serial writer queue (Swift
/// callers), right there on the calling thread when that cannot wait (the host's loop), or queued
/// on the writer queue with an answer when done. Before each write, and
/// every ``StoreSettings/pollInterval`` while the database is open, it compares
/// `PRAGMA data_version` on the writer connection: that number changes only when *another*
/// connection (another process) has committed, and then the registered catch-up handlers re-read
/// what they show. Handlers and the `committed` part of each write run on the writer queue, so
/// whatever they report goes out in commit order.
///
/// Opening may wait for another process's lock (creating the tables, or the write-ahead log
/// GRDB sets up, needs it): the host's loop never does. It tries an open that gives up at once
/// (``onWriterIfFree(_:)``), and otherwise hands the work to ``enqueueOpening(_:)``, which opens
/// on a queue of its own and then queues the work on the writer, in the order it was asked for.
///
/// The poller holds the database weakly and ends when it goes away or ``close()`` is called.
final class StoreDatabase: Sendable {
    /// Called on the writer queue, inside a transaction, after another process committed.
    typealias CatchUp = @Sendable (Database) throws -> Void

    let settings: StoreSettings
    private let schema: [String]
    private let state = Mutex<State>(.unopened)
    private let catchUps = Mutex<[CatchUp]>([])
    /// The store file the connections opened (nil for a private in-memory database): a write
    /// commits only while the path still names it (see ``checkFileAtPath()``).
    let openedFile = Mutex<DatabaseLocation.FileIdentity?>(nil)
    /// Its write-ahead log (`-wal`) as the connections opened it: while they are open no other
    /// process removes it, so another file or none at that path means the log was deleted.
    let openedLog = Mutex<DatabaseLocation.FileIdentity?>(nil)
    /// The writer connection's last `PRAGMA data_version`.
    private let dataVersion = Mutex<Int64>(0)
    /// Writes queued on the writer and not finished: while there are any, no write may run on
    /// the loop (it would overtake them).
    let queuedWrites = Atomic<Int>(0)
    /// Blocks running on the writer queue, or about to: a write on the loop goes to the queue
    /// rather than wait for them.
    let writerUsers = Atomic<Int>(0)
    /// Whether the writer connection waits for another process's lock (`busy_timeout`); only
    /// read and changed on the writer connection, one block at a time.
    let waitsForLocks = Mutex(true)
    /// How long the writer waits for another process's lock before reporting `unavailable`.
    static let lockTimeoutMilliseconds = 10_000
    /// How often an open that waits for a lock tries again.
    static let lockPollMilliseconds = 5
    /// True while a checkpoint is queued on the writer.
    let checkpointQueued = Atomic<Bool>(false)

    let clock: any ServiceClock
    /// Opens that wait for another process's lock, one at a time, off the loop.
    private let opener = DispatchQueue(label: "crescent.store.open")
    /// Work handed to ``opener`` and not yet queued on the writer: while there is any, later
    /// work goes the same way, so none overtakes it.
    private let waitingForOpen = Atomic<Int>(0)
    /// True while the loop opens the database: the busy handler then gives up at once.
    private let opensWithoutWaiting = Atomic<Bool>(false)
    /// How many opens on ``opener`` gave up on another process's lock, and the last one's error.
    private let lockFailures = Mutex<(count: Int, error: ServiceError?)>((0, nil))

    private enum State {
        case unopened
        /// A thread is opening the database (the state lock is not held meanwhile).
        case opening
        case open(any DatabaseWriter, StorePoller?)
        case failed(ServiceError)
        case closed
    }

    /// A database at the settings' location, opened (and checked: an existing file must be an
    /// SQLite database we may read and write) on first use, so a run that never touches it never
    /// fails because of it.
    ///
    /// - Parameter schema: `CREATE ... IF NOT EXISTS` statements run when the database opens.
    init(settings: StoreSettings, schema: [String], clock: any ServiceClock = SystemClock.shared) {
        self.settings = settings
        self.schema = schema
        self.clock = clock
    }

    deinit {
        if case .open(_, let poller) = state.withLock({ $0 }) { poller?.cancel() }
    }

    /// The path of the file, or `:memory:`.
    var path: String {
        switch settings.location {
        case .memory: StoreSettings.memoryName
        case .file(let path): path
        }
    }

    /// Registers `catchUp` to run after another process commits.
    func onExternalChange(_ catchUp: @escaping CatchUp) {
        catchUps.withLock { $0.append(catchUp) }
    }

    // MARK: Access

    /// The open database, opening it (with its folders and tables) on first use, waiting for
    /// another process's lock up to ``lockTimeoutMilliseconds``. Never call it on the loop.
    func writer() throws(ServiceError) -> any DatabaseWriter {
        while true {
            if let writer = try openIfNeeded(waiting: true) { return writer }
            // The loop is trying an open that gives up at once: it is done in a moment.
            usleep(1_000)
        }
    }

    /// The open database, opening it on first use unless that would wait for another
    /// process's lock or for an open under way (nil then).
    private func openIfNeeded(waiting: Bool) throws(ServiceError) -> (any DatabaseWriter)? {
        let known: Result<(any DatabaseWriter)?, ServiceError>? = state.withLock { state in
            switch state {
            case .open(let writer, _): return .success(writer)
            case .failed(let error): return .failure(error)
            case .closed: return .failure(Self.closedError)
            case .opening: return .success(nil)
            case .unopened:
                state = .opening
                return nil
            }
        }
        if let known { return try known.get() }
        // This thread opens; the state lock is free meanwhile, so a wait here holds up no one.
        let outcome: Result<(any DatabaseWriter)?, ServiceError>
        do throws(ServiceError) {
            outcome = .success(try open(waiting: waiting))
        } catch {
            outcome = .failure(Self.namingDescriptorShortage(error))
        }
        let opened = try? outcome.get()
        let poller = opened.flatMap { _ in startPoller() }
        let closedMeanwhile = state.withLock { state in
            if case .closed = state { return true }
            switch outcome {
            case .success(let writer?): state = .open(writer, poller)
            // Another process's lock is no lasting failure: the next use tries again.
            case .success(nil): state = .unopened
            // Nor is a shortage of descriptors: once files are closed, the next use opens it.
            case .failure(let error): state = error.code == .unavailable || Self.isDescriptorShortage(error) ? .unopened : .failed(error)
            }
            return false
        }
        if closedMeanwhile {
            poller?.cancel()
            try? opened?.close()
            throw Self.closedError
        }
        return try outcome.get()
    }

    private static let closedError = ServiceError(.unavailable, "the store is closed")

    private static let descriptorShortage = "the process has too many open files (EMFILE): close files, or raise the limit (ulimit -n); the next call tries again"

    /// `error`, saying that the cause was too many open files when no descriptor can be opened
    /// now (SQLite only says it was "unable to open database file").
    private static func namingDescriptorShortage(_ error: ServiceError) -> ServiceError {
        let probe = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
        if probe >= 0 {
            Glibc.close(probe)
            return error
        }
        guard errno == EMFILE || errno == ENFILE else { return error }
        return ServiceError(error.code, "\(error.message): \(descriptorShortage)", service: error.service)
    }

    private static func isDescriptorShortage(_ error: ServiceError) -> Bool {
        error.message.hasSuffix(descriptorShortage)
    }

    /// True once ``close()`` was called.
    var isClosed: Bool {
        guard case .closed = state.withLock({ $0 }) else { return false }
        return true
    }

    /// The database when it is open (nil before the first use, after a failure or ``close()``).
    var openWriter: (any DatabaseWriter)? {
        guard case .open(let writer, _) = state.withLock({ $0 }) else { return nil }
        return writer
    }

    /// Runs `body` on the writer queue outside a transaction, here and now, when nothing can make
    /// it wait: the database opens without waiting for a lock, and no work is queued on the
    /// writer or waits for the open. Nil when it did not run (hand the work to
    /// ``enqueueOpening(_:)``). For the loop.
    func onWriterIfFree<Output>(_ body: (Database) throws -> Output) throws(ServiceError) -> Output? {
        guard waitingForOpen.load(ordering: .acquiring) == 0, queuedWrites.load(ordering: .acquiring) == 0 else { return nil }
        guard let writer = try openIfNeeded(waiting: false) else { return nil }
        writerUsers.add(1, ordering: .acquiringAndReleasing)
        defer { writerUsers.subtract(1, ordering: .acquiringAndReleasing) }
        // Another block on the writer queue (the poller, a Swift caller) would make us wait.
        guard writerUsers.load(ordering: .acquiring) == 1 else { return nil }
        return try mapErrors { try writer.writeWithoutTransaction(body) }
    }

    /// Queues `body` on the writer queue after the work queued before it, and runs it there
    /// with the database: when the database is not open yet (or work before it waits for the
    /// open), it opens on a queue of its own first, waiting for another process's lock there;
    /// `body` gets the open's failure instead. Never waits on the calling thread.
    func enqueueOpening(_ body: @escaping @Sendable (Result<Database, ServiceError>) -> Void) {
        if waitingForOpen.load(ordering: .acquiring) == 0, let writer = openWriter {
            enqueue(on: writer) { db in body(.success(db)) }
            return
        }
        // Counted as queued too, so no write on the loop overtakes it.
        waitingForOpen.add(1, ordering: .acquiringAndReleasing)
        queuedWrites.add(1, ordering: .acquiringAndReleasing)
        let failuresBefore = lockFailures.withLock { $0.count }
        opener.async {
            defer {
                self.queuedWrites.subtract(1, ordering: .acquiringAndReleasing)
                self.waitingForOpen.subtract(1, ordering: .acquiringAndReleasing)
            }
            // An open that gave up on the lock while this waited answers it too: each waits
            // once, not once per work ahead of it.
            if let failure = self.lockFailures.withLock({ $0.count > failuresBefore ? $0.error : nil }) {
                return body(.failure(failure))
            }
            do throws(ServiceError) {
                let writer = try self.writer()
                self.enqueue(on: writer) { db in body(.success(db)) }
            } catch {
                if error.code == .unavailable { self.lockFailures.withLock { $0 = ($0.count + 1, error) } }
                body(.failure(error))
            }
        }
    }

    /// Runs `body` on the writer queue outside a transaction (loading a collection in step
    /// with the writes that follow).
    func onWriter<Output>(_ body: (Database) throws -> Output) throws(ServiceError) -> Output {
        let writer = try writer()
        writerUsers.add(1, ordering: .acquiringAndReleasing)
        defer { writerUsers.subtract(1, ordering: .acquiringAndReleasing) }
        return try mapErrors { try writer.writeWithoutTransaction(body) }
    }

    /// Reads with `body` (on a reader connection of the pool).
    func read<Output>(_ body: (Database) throws -> Output) throws(ServiceError) -> Output {
        let writer = try writer()
        return try mapErrors { try writer.read(body) }
    }

    /// Stops polling and closes the database; later calls fail with `unavailable`. Idempotent.
    func close() {
        let previous = state.withLock { state in
            defer { state = .closed }
            return state
        }
        guard case .open(let writer, let poller) = previous else { return }
        poller?.cancel()
        try? writer.close()
    }

    // MARK: Other processes

    /// Checks `PRAGMA data_version` and, when another connection has committed, runs the
    /// catch-up handlers. Call on the writer queue.
    func catchUp(_ db: Database) throws {
        guard let version = try versionAfterOtherCommits(db) else { return }
        dataVersion.withLock { $0 = version }
        for handler in catchUps.withLock({ $0 }) { try handler(db) }
    }

    /// The writer connection's `PRAGMA data_version` when another connection has committed since
    /// the last catch-up, else nil (always nil for a private in-memory database).
    func versionAfterOtherCommits(_ db: Database) throws -> Int64? {
        guard case .file = settings.location else { return nil }
        let version = try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
        return dataVersion.withLock { $0 } == version ? nil : version
    }

    /// Catches up with other processes now (what each poll does), inside a read transaction so
    /// every handler sees one snapshot.
    func catchUpNow() throws(ServiceError) {
        try onWriter { db in
            try db.inTransaction(.deferred) {
                try catchUp(db)
                return .commit
            }
        }
    }

    private func poll() {
        guard case .open = state.withLock({ $0 }) else { return }
        try? catchUpNow()
    }

    private func startPoller() -> StorePoller? {
        guard case .file = settings.location else { return nil }
        return StorePoller(interval: .nanoseconds(Int64(clamping: settings.pollInterval)), clock: clock) { [weak self] in
            guard let database = self else { return false }
            database.poll()
            return true
        }
    }

    // MARK: Opening

    /// Opens the database; with `waiting` false, nil when that would wait for another process's
    /// lock.
    private func open(waiting: Bool) throws(ServiceError) -> (any DatabaseWriter)? {
        opensWithoutWaiting.store(!waiting, ordering: .releasing)
        defer { opensWithoutWaiting.store(false, ordering: .releasing) }
        var configuration = Configuration()
        // Like `busy_timeout`, unless the loop is opening; transactions set their own timeout.
        configuration.busyMode = .callback { [weak self] tries in
            guard let self, !opensWithoutWaiting.load(ordering: .acquiring) else { return false }
            guard tries < Self.lockTimeoutMilliseconds / Self.lockPollMilliseconds else { return false }
            usleep(useconds_t(Self.lockPollMilliseconds * 1_000))
            return true
        }
        configuration.label = "crescent.store"
        let synchronous = settings.synchronous.rawValue
        configuration.prepareDatabase { [weak self] db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            // Commits may run on the host's loop: instead of checkpointing inside them (which
            // syncs the disk), SQLite tells the hook how long the log is and the checkpoint is
            // queued on the writer. Setting a hook turns SQLite's own checkpoints off.
            // Invariant for the hook's unretained pointer: the connections belong to this
            // object's pool and close with it, and every queued write holds this object, so no
            // commit can call the hook after it is gone.
            guard let self else { return }
            sqlite3_wal_hook(db.sqliteConnection, storeLogHook, Unmanaged.passUnretained(self).toOpaque())
        }
        let writer: any DatabaseWriter
        do {
            switch settings.location {
            case .memory:
                writer = try DatabaseQueue(configuration: configuration)
            case .file(let path):
                try DatabaseLocation.check(path)
                try DatabaseLocation.createFolders(for: path)
                writer = try DatabasePool(path: path, configuration: configuration)
                openedFile.withLock { $0 = DatabaseLocation.identity(of: path) }
                openedLog.withLock { $0 = DatabaseLocation.identity(of: path + "-wal") }
            }
            let schema = self.schema
            let fingerprint = Self.fingerprint(of: schema)
            let version = try writer.writeWithoutTransaction { db in
                // A database that has this schema already is opened without the write lock, so
                // another process writing does not hold the open up.
                if try Int32.fetchOne(db, sql: "PRAGMA user_version") != fingerprint {
                    try db.inTransaction(.immediate) {
                        for statement in schema { try db.execute(sql: statement) }
                        try db.execute(sql: "PRAGMA user_version = \(fingerprint)")
                        return .commit
                    }
                }
                return try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
            }
            dataVersion.withLock { $0 = version }
        } catch let error as ServiceError {
            throw error
        } catch let error as DatabaseError where error.resultCode.primaryResultCode == .SQLITE_BUSY {
            guard waiting else { return nil }
            throw ServiceError(.unavailable, "the store database \(path) is locked by another process that is writing to it; try again once it has finished")
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode.primaryResultCode) {
            throw ServiceError(.io, "cannot open the store database \(path): \(Self.describe(error)); \(DatabaseLocation.moveAside)")
        } catch {
            throw ServiceError(.io, "cannot open the store database \(path): \(Self.describe(error))")
        }
        return writer
    }

    /// A number for `schema` kept as the database's `user_version`: equal numbers mean the
    /// schema is in place (FNV-1a over the statements, folded to 31 bits so it is never negative).
    static func fingerprint(of schema: [String]) -> Int32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in schema.joined(separator: ";").utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return Int32(hash & 0x7FFF_FFFF) | 1
    }

    func mapErrors<Output>(_ body: () throws -> Output) throws(ServiceError) -> Output {
        do {
            return try body()
        } catch let error as ServiceError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw ServiceError(.unavailable, "the store database \(path) is locked by another process: \(Self.describe(error))")
        } catch {
            throw ServiceError(.io, "the store database \(path) failed: \(Self.describe(error))")
        }
    }

    /// The SQLite message of a database error, else the error's description.
    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return "\(error)"
    }
}

/// SQLite's write-ahead log hook for the store's connections: after each commit, the log's
/// length in frames goes to the store (see ``StoreDatabase/logGrew(to:)``).
private let storeLogHook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = { context, _, _, frames in
    guard let context else { return SQLITE_OK }
    Unmanaged<StoreDatabase>.fromOpaque(context).takeUnretainedValue().logGrew(to: Int(frames))
    return SQLITE_OK
}
