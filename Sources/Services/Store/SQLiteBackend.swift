import GRDB
import Model
import Synchronization

/// The store's records in its SQLite database (``StoreDatabase``): each write one IMMEDIATE
/// transaction on the writer connection, its report sent from the writer right after the commit;
/// other processes' commits are noticed through `PRAGMA data_version` and re-read.
final class SQLiteBackend: StoreBackend {
    let database: StoreDatabase

    init(database: StoreDatabase) {
        self.database = database
    }

    var settings: StoreSettings { database.settings }
    var displayName: String { database.path }

    func collection(_ name: String, make: (CollectionRows) -> StoreCollection) throws(ServiceError) -> StoreCollection {
        // Loaded on the writer, so no write or catch-up can fall between the read and the
        // collection's first change.
        if let collection = try database.onWriterIfFree({ db in make(CollectionRows(sorted: try Self.load(name, db))) }) {
            follow(collection)
            return collection
        }
        // The writer would wait (another process holds the lock the open needs, or writes are
        // queued): the committed records are read on a connection of their own, which waits
        // for no one, and read again on the writer (in step with the writes after it), any
        // difference arriving as a change. Only when even that read would wait does the
        // collection answer empty at first, its records arriving as a change.
        let peeked = database.peek { db in try db.tableExists("records") ? try Self.load(name, db) : [] }
        let collection = make(peeked.map { CollectionRows(sorted: $0) } ?? .unloaded)
        follow(collection)
        load(collection, again: peeked != nil)
        return collection
    }

    /// Makes `collection` catch up with other processes' commits itself, so it keeps doing so
    /// even when only it is kept.
    private func follow(_ collection: StoreCollection) {
        database.onExternalChange { [weak collection] db in
            guard let collection else { return }
            let fresh = try Self.load(collection.name, db)
            collection.apply { $0.replaceAll(with: fresh) }
        }
    }

    /// Reads `collection`'s records on the writer queue, after the database opens, and reports
    /// them as a change; while another process keeps the lock, again a second later.
    ///
    /// - Parameter again: read them even though they were read (outside the writer, so a commit
    ///   may have come between that read and the writer's).
    private func load(_ collection: StoreCollection, again: Bool = false) {
        let database = self.database
        database.enqueueOpening { [weak self, weak collection] opened in
            guard let self, let collection else { return }
            do throws(ServiceError) {
                let db = try opened.get()
                try database.mapErrors {
                    guard again else { return try Self.loadIfNeeded(collection, db) }
                    let fresh = try Self.load(collection.name, db)
                    collection.apply { $0.replaceAll(with: fresh) }
                }
            } catch {
                // Any other failure is reported to each write to the collection.
                guard error.code == .unavailable, !database.isClosed else { return }
                database.clock.schedule(after: Self.loadRetryDelay) { [weak self, weak collection] in
                    guard let self, let collection else { return }
                    load(collection, again: again)
                }
            }
        }
    }

    /// How long a collection whose records could not be read for a lock waits to try again.
    static let loadRetryDelay = Duration.seconds(1)

    /// Reads `collection`'s records when they were never read. Call on the writer queue.
    static func loadIfNeeded(_ collection: StoreCollection, _ db: Database) throws {
        guard !collection.rows.withLock({ $0.isLoaded }) else { return }
        let fresh = try load(collection.name, db)
        collection.apply { $0.replaceAll(with: fresh) }
    }

    func write(_ operation: StoreOperation, to collection: StoreCollection) throws(ServiceError) -> Value {
        try database.write(Self.write(operation, to: collection))
    }

    /// At once on this thread (the loop) when allowed and nothing can make it wait, else
    /// prepared and run on the writer queue.
    func write(size: Int, _ prepare: @escaping @Sendable () throws(ServiceError) -> StoreOperation,
               to collection: StoreCollection, reply: Reply) {
        let later: @Sendable () throws(ServiceError) -> StoreWrite<Any, Value> = { () throws(ServiceError) in
            Self.write(try prepare(), to: collection)
        }
        guard settings.writesOnLoop && size <= StoreDatabase.immediateRowLimit && collection.rows.withLock({ $0.isLoaded }) else {
            database.writeLater(later, unlessCancelled: { reply.isCancelled }, mayCommit: { reply.commit() }, done: { reply($0) })
            return
        }
        let write: StoreWrite<Any, Value>
        do {
            write = Self.write(try prepare(), to: collection)
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
    }

    func catchUpNow() throws(ServiceError) {
        try database.catchUpNow()
    }

    func close() {
        database.close()
    }

    /// The records of collection `name`, sorted by id.
    static func load(_ name: String, _ db: Database) throws -> [(id: Int64, record: Value)] {
        var loaded: [(id: Int64, record: Value)] = []
        let rows = try Row.fetchCursor(db, sql: "SELECT id, data FROM records WHERE collection = ? ORDER BY id",
                                       arguments: [name])
        while let row = try rows.next() {
            loaded.append((row[0], StoreCollection.record(id: row[0], json: row[1])))
        }
        return loaded
    }
}
