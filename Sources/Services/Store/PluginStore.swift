public import Model

/// What a plugin that requires `store` sees as `services.store`: collections of its own, kept
/// apart from the scripts' and from every other plugin's, and the scripts' collections only as
/// its `[permissions] collections` grants them.
///
/// A plugin's own collection `NAME` is the store's collection `plugin:KEY:NAME` (its `name`
/// reads so), where KEY is the plugin's data folder's name: the plugin's name, or `NAME-HASH`
/// for a plugin of that name from another folder (a cloned project's `plugins/places`
/// shadowing the installed one), which thus reaches none of the other's records. No script can take such a name: `store:collection` refuses names starting with
/// ``reservedPrefix``. The scripts' collections are reached by `scriptCollection(name)`.
///
/// ```lua
/// local saved = services.store:collection("places")          -- its own, no grant needed
/// local shopping = services.store:scriptCollection("groceries") -- needs collections = ["groceries"]
/// ```
public final class PluginStore: Service {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }

    /// The store every plugin's and script's collections live in.
    let store: Store
    /// The plugin's name.
    let plugin: String
    /// What its collections are kept under: its data folder's name (``entry(over:plugin:key:granted:)``).
    let key: String
    /// The scripts' collections it was granted (`*`: all of them).
    let granted: [String]

    /// The start of every plugin's collection name in the store; scripts may not take it.
    public static let reservedPrefix = "plugin:"

    init(store: Store, plugin: String, key: String, granted: [String]) {
        self.store = store
        self.plugin = plugin
        self.key = key
        self.granted = granted
    }

    /// The entry a plugin's host gets for `store` in place of `entry` (the host's store).
    ///
    /// - Parameters:
    ///   - plugin: the plugin's name.
    ///   - key: the name of its data folder (`NAME`, or `NAME-HASH` for a plugin of a name
    ///     another folder's plugin had first): its collections are kept under it.
    ///   - granted: its `[permissions] collections` (checked granted before it starts).
    public static func entry(over entry: ServiceEntry, plugin: String, key: String, granted: [String]) -> ServiceEntry {
        ServiceEntry(named: Store.serviceName, declaration: { declaration }) { () throws(ServiceError) in
            guard let store = try entry.service() as? Store else {
                throw ServiceError(.internal, "the store service is not the standard one")
            }
            return PluginStore(store: store, plugin: plugin, key: key, granted: granted)
        }
    }

    /// The store's name of the plugin's own collection `name`.
    func ownName(_ name: String) throws(ServiceError) -> String {
        let full = Self.reservedPrefix + key + ":" + name
        guard !name.isEmpty, full.utf8.count <= Store.maxNameLength else {
            throw ServiceError(.invalidArgument, "a collection name of plugin '\(plugin)' must be 1 to "
                               + "\(Store.maxNameLength - full.utf8.count + name.utf8.count) bytes long (it is kept as \(Self.reservedPrefix)\(key):NAME)")
        }
        return full
    }

    /// The plugin's own collection `name`.
    public func collection(named name: String) throws(ServiceError) -> StoreCollection {
        try store.collection(named: try ownName(name))
    }

    /// The scripts' collection `name`, when granted.
    public func scriptCollection(named name: String) throws(ServiceError) -> StoreCollection {
        if let refusal = refusal(name, to: "use") { throw refusal }
        return try store.collection(named: name)
    }

    /// Why the plugin may not `verb` the scripts' collection `name`, or nil when it may.
    private func refusal(_ name: String, to verb: String) -> ServiceError? {
        if let problem = Store.scriptNameProblem(name) { return ServiceError(.invalidArgument, problem) }
        if granted.contains("*") || granted.contains(name) { return nil }
        return ServiceError(.permission, "plugin '\(plugin)' may not \(verb) the scripts' collection '\(name)': not granted "
                            + "(add it to [permissions] collections in its plugin.toml, then run crescent plugins allow \(plugin))")
    }

    /// Copies the scripts' collection `name` into the plugin's own collection of that name,
    /// once: what a plugin that kept its records among the scripts' collections (as plugins did
    /// before they had their own) calls to keep them. Without a grant only the collection
    /// named after the plugin may be taken (plugin `places`, collection `places`): that name
    /// was the plugin's. The scripts' collection is left as it was. Answers how many records
    /// were copied (0 when it was adopted before or is empty).
    public func adopt(_ name: String) throws(ServiceError) -> Int {
        if let problem = Store.scriptNameProblem(name) { throw ServiceError(.invalidArgument, problem) }
        // Only the first plugin folder of a name (whose key is the name) had the collection of
        // that name for its own; a shadowing plugin needs the grant like any other name.
        if name != plugin || key != plugin, let refusal = refusal(name, to: "adopt") { throw refusal }
        // The record of what was adopted: a collection no plugin's own name can be.
        let ledger = try store.collection(named: Self.reservedPrefix + key)
        let adopted = { ledger.items.contains(where: { $0["adopted"].stringValue == name }) }
        // The usual answer, at every start after the first: recorded, so nothing to wait for.
        if adopted() { return 0 }
        let own = try collection(named: name)
        let scripts = try store.collection(named: name)
        // Writes wait for a collection's records to be read: an empty write to each makes sure
        // `items` below are the committed ones, not an unloaded collection's nothing.
        for collection in [ledger, own, scripts] { _ = try collection.add(.array([])) }
        if adopted() { return 0 }
        let records = scripts.items.map { record -> Value in
            guard case .object(var fields) = record else { return record }
            fields["id"] = nil
            return .object(fields)
        }
        if !records.isEmpty { _ = try own.add(.array(records)) }
        _ = try ledger.add(.object(["adopted": .string(name), "count": .integer(Int64(records.count))]))
        return records.count
    }

    static let declaration: AnyInterface = Interface<PluginStore>(
        name: Store.serviceName, summary: "The plugin's own collections of records, and the scripts' ones it was granted."
    ) { d in
        d.property("path", type: "string", "The database file (\":memory:\" for a throwaway store), or the PostgreSQL URL without its password.") { .string($0.store.path) }
        d.function("collection", [.init("name", .string, "The collection's name.")], returns: "the collection",
                   "The plugin's own collection of that name (kept apart from the scripts' and other plugins'), created empty if new.") { store, arguments throws(ServiceError) in
            .handle(ObjectHandle(try store.collection(named: try Store.collectionName(arguments[0]))))
        }
        d.function("scriptCollection", [.init("name", .string, "The scripts' collection's name.")], returns: "the collection",
                   "The scripts' collection of that name, when [permissions] collections grants it (permission otherwise).") { store, arguments throws(ServiceError) in
            .handle(ObjectHandle(try store.scriptCollection(named: try Store.collectionName(arguments[0]))))
        }
        d.function("adopt", [.init("name", .string, "The scripts' collection's name.")], returns: "how many records were copied",
                   "Copies the scripts' collection into the plugin's own of that name, once (the one named after the plugin needs no grant).") { store, arguments throws(ServiceError) in
            .integer(Int64(try store.adopt(try Store.collectionName(arguments[0]))))
        }
    }.erased
}
