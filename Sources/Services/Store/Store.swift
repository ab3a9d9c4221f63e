import GRDB
public import Model
import Synchronization

/// The `store` service: SQLite-backed observable collections.
///
/// One database per store (see ``StoreSettings`` for where it lives), opened on first use and
/// shared with the `session` service. `store:collection(name)` answers at once with the one
/// collection object of that name, which scripts observe and write through.
///
/// ```lua
/// local releases = services.store:collection("releases")
/// releases:add({ name = "1.0", done = false }, function(record, err) print(record.id) end)
/// ```
public final class Store: Service {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }

    let database: StoreDatabase
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

    init(database: StoreDatabase) {
        self.database = database
    }

    /// The `store`, `session` and `feeds` services over one database, from the `[store]`,
    /// `[session]` and `[feeds]` sections and the data folder of `context`; the feeds fetch
    /// through `http`'s service. Settings are read now (a bad one fails the services that use
    /// it); the database is opened when a service first needs it, and a database that cannot be
    /// opened (corrupt, unreadable, locked) fails only the calls that use it.
    static func entries(_ context: PluginContext, http: ServiceEntry) -> [ServiceEntry] {
        let database: StoreDatabase
        do throws(ServiceError) {
            database = try StoreDatabase(settings: try StoreSettings(context),
                                         schema: schema + UserDirectory.schema + FeedArchive.schema, clock: context.clock)
        } catch {
            return [declaration, Session.declaration, FeedsService.declaration].map { ServiceEntry($0, failed: error) }
        }
        let clock = context.clock
        let session: ServiceEntry
        do throws(ServiceError) {
            let settings = try SessionSettings(context.section("session"))
            session = ServiceEntry(Session.declaration) { () throws(ServiceError) in
                Session(database: database, settings: settings, clock: clock)
            }
        } catch {
            session = ServiceEntry(Session.declaration, failed: error)
        }
        let feeds: ServiceEntry
        do throws(ServiceError) {
            let settings = try FeedSettings(context.section("feeds"))
            feeds = ServiceEntry(FeedsService.declaration) { () throws(ServiceError) in
                guard let service = try http.service() as? HTTPService else {
                    throw ServiceError(.internal, "the http service is not the standard one")
                }
                return FeedsService(database: database, settings: settings, transport: HTTPFeedTransport(http: service), clock: clock)
            }
        } catch {
            feeds = ServiceEntry(FeedsService.declaration, failed: error)
        }
        return [ServiceEntry(declaration) { () throws(ServiceError) in Store(database: database) }, session, feeds]
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
                                              schema: Self.schema + UserDirectory.schema + FeedArchive.schema))
    }

    /// The database file's path, or `:memory:`.
    public var path: String { database.path }

    /// The collection named `name`: the same object for the same name. The first call reads the
    /// collection's records into memory (opening the database on first use).
    public func collection(named name: String) throws(ServiceError) -> StoreCollection {
        if let known = collections.withLock({ $0[name] }) { return known }
        guard !name.isEmpty, name.utf8.count <= Self.maxNameLength else {
            throw ServiceError(.invalidArgument, "a collection name must be 1 to \(Self.maxNameLength) bytes long")
        }
        // Loaded on the writer, so no write or catch-up can fall between the read and the
        // collection's first change.
        return try database.onWriter { db in
            if let known = collections.withLock({ $0[name] }) { return known }
            let collection = StoreCollection(name: name, rows: CollectionRows(sorted: try StoreCollection.load(name, db)),
                                             database: database)
            collections.withLock { $0[name] = collection }
            // The collection catches up itself, so it keeps doing so even when only it is kept.
            database.onExternalChange { [weak collection] db in try collection?.catchUp(db) }
            return collection
        }
    }

    /// Stops polling for other processes' changes and closes the database (the session's too);
    /// later calls fail with `unavailable`. Releasing the store does the same.
    public func close() {
        database.close()
    }

    /// Reads what other processes have committed since the last check, now rather than at the
    /// next poll, and reports it.
    public func catchUpWithOtherProcesses() throws(ServiceError) {
        try database.catchUpNow()
    }

    static let declaration: AnyInterface = Interface<Store>(
        name: "store", summary: "SQLite-backed observable collections of records."
    ) { d in
        d.property("path", type: "string", "The database file (\":memory:\" for a throwaway store).") { .string($0.path) }
        d.function("collection", [.init("name", .string, "The collection's name.")], returns: "the collection",
                   "The collection of that name (the same object each time), created empty if new.") { store, arguments throws(ServiceError) in
            .handle(ObjectHandle(try store.collection(named: arguments[0].stringValue ?? "")))
        }
    }.erased
}
