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
        try database.onWriter { db in
            let collection = make(CollectionRows(sorted: try Self.load(name, db)))
            // The collection catches up itself, so it keeps doing so even when only it is kept.
            database.onExternalChange { [weak collection] db in
                guard let collection else { return }
                let fresh = try Self.load(collection.name, db)
                collection.apply { $0.replaceAll(with: fresh) }
            }
            return collection
        }
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
        guard settings.writesOnLoop && size <= StoreDatabase.immediateRowLimit else {
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
