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

    /// Makes the `store`, `session` and `feeds` services over one database, from the `[store]`,
    /// `[session]`, `[feeds]` (and `[http]`, for fetching feeds) sections and the data folder of
    /// `context`.
    ///
    /// - Throws: `invalid_argument` for a bad setting, `io` when the database cannot be opened
    ///   where it should be.
    public static func make(_ context: PluginContext) throws(ServiceError) -> [any Service] {
        let settings = try StoreSettings(context)
        let sessionSettings = try SessionSettings(context.section("session"))
        let feedSettings = try FeedSettings(context.section("feeds"))
        // The feeds fetch through an http service of their own, with the same [http] settings
        // and proxies as services.http (its connections are made on first use).
        let feedTransport = HTTPFeedTransport(http: try HTTPService(config: context.section("http")))
        let database = try StoreDatabase(settings: settings, schema: schema + UserDirectory.schema + FeedArchive.schema,
                                         clock: context.clock)
        return [Store(database: database), Session(database: database, settings: sessionSettings, clock: context.clock),
                FeedsService(database: database, settings: feedSettings, transport: feedTransport, clock: context.clock)]
    }

    /// ``make(_:)`` as a value for the `StandardServices` list. (Listing `Store.make` or a closure
    /// literal there crashes the Swift 6.3 compiler in SILGen; a stored closure does not.)
    static let maker: @Sendable (PluginContext) throws(ServiceError) -> [any Service] = make

    /// A store over its own database (for Swift code and tests).
    public convenience init(path: String) throws(ServiceError) {
        let location: StoreSettings.Location = path == StoreSettings.memoryName ? .memory : .file(path)
        try self.init(database: StoreDatabase(settings: StoreSettings(location: location),
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
