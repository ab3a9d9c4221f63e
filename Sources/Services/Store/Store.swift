import GRDB
public import Model
import Synchronization

/// The `store` service: observable collections of records in SQLite (the default) or in a
/// PostgreSQL database several hosts share (see ``StoreBackend``).
///
/// One database per store (see ``StoreSettings`` for where it lives), opened on first use and
/// shared with the `session` and `feeds` services. `store:collection(name)` answers at once with the one
/// collection object of that name, which scripts observe and write through.
///
/// ```lua
/// local releases = services.store:collection("releases")
/// releases:add({ name = "1.0", done = false }, function(record, err) print(record.id) end)
/// ```
public final class Store: Service {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }

    /// The SQLite database of the records, the session and the feeds (an empty one in memory
    /// when they are all in PostgreSQL).
    let database: StoreDatabase
    /// Where the records live.
    let backend: any StoreBackend
    private let collections = Mutex<[String: StoreCollection]>([:])

    /// Collection names are 1 to this many bytes.
    static let maxNameLength = 200

    /// The store's tables.
    static let schema = [
        """
        CREATE TABLE IF NOT EXISTS records (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            collection TEXT NOT NULL,
            data TEXT NOT NULL
        )
        """,
        "CREATE INDEX IF NOT EXISTS records_by_collection ON records (collection, id)",
    ]

    init(database: StoreDatabase, backend: (any StoreBackend)? = nil) {
        self.database = database
        self.backend = backend ?? SQLiteBackend(database: database)
    }

    /// The `store`, `session` and `feeds` services over one database, from the `[store]`,
    /// `[session]` and `[feeds]` sections and the data folder of `context`; the feeds fetch
    /// through `http`'s service. Settings are read now (a bad one fails the services that use
    /// it); the database is opened when a service first needs it, and a database that cannot be
    /// opened (corrupt, unreadable, locked) fails only the calls that use it.
    static func entries(_ context: PluginContext, http: ServiceEntry) -> [ServiceEntry] {
        let database: StoreDatabase
        let backend: any StoreBackend
        let users: any UserDirectory, archive: any FeedArchive
        do throws(ServiceError) {
            var settings = try StoreSettings(context)
            if let url = settings.postgres {
                let postgres = PostgresBackend(settings: settings, url: url, clock: context.clock)
                (backend, users, archive) = (postgres, PostgresUserDirectory(backend: postgres), PostgresFeedArchive(backend: postgres))
                // Everything lives in PostgreSQL: the SQLite database stays an empty one in memory.
                settings.location = .memory
                database = StoreDatabase(settings: settings, schema: [], clock: context.clock)
            } else {
                database = StoreDatabase(settings: settings, schema: schema + SQLiteUserDirectory.schema + SQLiteFeedArchive.schema, clock: context.clock)
                (backend, users, archive) = (SQLiteBackend(database: database), SQLiteUserDirectory(database: database), SQLiteFeedArchive(database: database))
            }
        } catch {
            return [ServiceEntry(Store.self, failed: error),
                    ServiceEntry(Session.self, failed: error),
                    ServiceEntry(FeedsService.self, failed: error)]
        }
        let clock = context.clock
        let session: ServiceEntry
        do throws(ServiceError) {
            let settings = try SessionSettings(context.section("session"))
            session = ServiceEntry(Session.self) { () throws(ServiceError) in
                Session(directory: users, settings: settings, clock: clock)
            }
        } catch {
            session = ServiceEntry(Session.self, failed: error)
        }
        let feeds: ServiceEntry
        do throws(ServiceError) {
            let settings = try FeedSettings(context.section("feeds"))
            feeds = ServiceEntry(FeedsService.self) { () throws(ServiceError) in
                guard let service = try http.service() as? HTTPService else {
                    throw ServiceError(.internal, "the http service is not the standard one")
                }
                return FeedsService(archive: archive, settings: settings, transport: HTTPFeedTransport(http: service), clock: clock)
            }
        } catch {
            feeds = ServiceEntry(FeedsService.self, failed: error)
        }
        let store = ServiceEntry(Store.self) { () throws(ServiceError) in
            Store(database: database, backend: backend)
        }
        return [store, session, feeds]
    }

    /// The `store`, `session` and `feeds` services of ``entries(_:http:)``, made now (for Swift
    /// code and tests); the feeds fetch through an http service with the `[http]` settings.
    public static func make(_ context: PluginContext) throws(ServiceError) -> [any Service] {
        var services: [any Service] = []
        for entry in entries(context, http: HTTPService.entry(context)) { services.append(try entry.service()) }
        return services
    }

    /// A store over its own database (for Swift code and tests).
    public convenience init(path: String) throws(ServiceError) {
        let location: StoreSettings.Location = path == StoreSettings.memoryName ? .memory : .file(path)
        self.init(database: StoreDatabase(settings: StoreSettings(location: location),
                                              schema: Self.schema + SQLiteUserDirectory.schema + SQLiteFeedArchive.schema))
    }

    /// A store over the database `url` names: a path, `sqlite:PATH` or `postgres://...` (for
    /// Swift code and tests; the session and feeds get a throwaway in-memory database).
    public convenience init(url: String, settings: Fields = [:], clock: any ServiceClock = SystemClock.shared) throws(ServiceError) {
        var section = settings
        section["url"] = .string(url)
        // The session and feeds of a PostgreSQL store get a throwaway database.
        let parsed = try StoreSettings(PluginContext(sections: ["store": .object(section)],
                                                     dataDirectory: PostgresURL.isPostgres(url) ? StoreSettings.memoryName : nil, clock: clock))
        var local = parsed
        if parsed.postgres != nil { local.location = .memory }
        let database = StoreDatabase(settings: local, schema: Self.schema + SQLiteUserDirectory.schema + SQLiteFeedArchive.schema, clock: clock)
        self.init(database: database, backend: parsed.postgres.map { PostgresBackend(settings: parsed, url: $0, clock: clock) })
    }

    /// The database file's path, `:memory:`, or the PostgreSQL URL without its password.
    public var path: String { backend.displayName }

    /// The collection named `name`: the same object for the same name. The first call reads the
    /// collection's records into memory (opening the database on first use). When that would
    /// wait for another process (it holds the lock the open needs) or for queued writes, the
    /// collection answers at once, empty, and its records arrive as one change (`items`, `count`,
    /// `didChange`) once read; writes to it wait for them.
    public func collection(named name: String) throws(ServiceError) -> StoreCollection {
        if let known = collections.withLock({ $0[name] }) { return known }
        guard !name.isEmpty, name.utf8.count <= Self.maxNameLength else {
            throw ServiceError(.invalidArgument, "a collection name must be 1 to \(Self.maxNameLength) bytes long")
        }
        // SQLite would cut the name there, and PostgreSQL refuses it.
        guard !name.utf8.contains(0) else {
            throw ServiceError(.invalidArgument, "a collection name must not contain a NUL character (\\0)")
        }
        do {
            return try backend.collection(name) { rows in
                collections.withLock { collections in
                    if let known = collections[name] { return known }
                    let collection = StoreCollection(name: name, rows: rows, backend: backend)
                    collections[name] = collection
                    return collection
                }
            }
        } catch {
            // A backend may make the collection before its first load (PostgreSQL does, so a
            // lock never holds the caller): one that failed is not kept, so the next call tries
            // again.
            collections.withLock { collections in
                if let made = collections[name], !made.rows.withLock({ $0.isLoaded }) { collections[name] = nil }
            }
            throw error
        }
    }

    /// Stops polling for other processes' changes and closes the database (the session's too);
    /// later calls fail with `unavailable`. Releasing the store does the same.
    public func close() {
        backend.close()
        database.close()
    }

    /// Reads what other processes have committed since the last check, now rather than at the
    /// next poll, and reports it.
    public func catchUpWithOtherProcesses() throws(ServiceError) {
        try backend.catchUpNow()
    }

    static let serviceName = "store"

    static let declaration: AnyInterface = Interface<Store>(
        name: serviceName, summary: "Observable collections of records (SQLite or PostgreSQL)."
    ) { d in
        d.property("path", type: "string", "The database file (\":memory:\" for a throwaway store), or the PostgreSQL URL without its password.") { .string($0.path) }
        d.function("collection", [.init("name", .string, "The collection's name.")], returns: "the collection",
                   "The collection of that name (the same object each time), created empty if new.") { store, arguments throws(ServiceError) in
            let name = try collectionName(arguments[0])
            if let problem = scriptNameProblem(name) { throw ServiceError(.invalidArgument, problem) }
            return .handle(ObjectHandle(try store.collection(named: name)))
        }
    }.erased

    /// The collection name a script or plugin gave. Bytes that are not UTF-8 come as `.bytes`,
    /// not a string: say so rather than that the name is empty.
    static func collectionName(_ value: Value) throws(ServiceError) -> String {
        guard let name = value.stringValue else {
            throw ServiceError(.invalidArgument, "a collection name must be valid UTF-8 text; this one has bytes that are not UTF-8")
        }
        return name
    }

    /// Why `name` cannot be one of the scripts' collections, or nil: names starting with
    /// `plugin:` are the plugins' own (``PluginStore``).
    static func scriptNameProblem(_ name: String) -> String? {
        guard name.hasPrefix(PluginStore.reservedPrefix) else { return nil }
        return "collection names starting with '\(PluginStore.reservedPrefix)' are kept for plugins' own collections; choose another name"
    }
}

extension Store: DeclaredService {}
