import Model
import Synchronization

/// A plugin found in a folder, as the host's registry sees it: its services are named by its
/// manifest and made when a script first touches one of them, which starts the plugin (its Lua
/// VM or its process) once for all of them.
struct ExternalPlugin: Plugin {
    let manifest: PluginManifest
    let limits: PluginsSection
    let launcher: PluginLauncher?

    var name: String { manifest.name }

    var settingKeys: [String: [String]] {
        // Built by assignment: a dictionary literal's (key, value) tuple type would be built at
        // start-up for this alone.
        var keys: [String] = []
        for setting in manifest.settings { keys.append(setting.key) }
        var sections: [String: [String]] = [:]
        sections[manifest.name] = keys
        return sections
    }

    func serviceEntries(_ context: PluginContext) throws(ServiceError) -> [ServiceEntry] {
        // Entries are made in one loop over the services, with no array of interfaces between:
        // that array's type would be built at start-up for this alone.
        @Sendable func placeholder(_ service: String) -> AnyInterface {
            AnyInterface(name: service, summary: "\(manifest.description) (plugin '\(manifest.name)': its methods are known once it starts)",
                         properties: [], methods: [], events: [])
        }
        var entries: [ServiceEntry] = []
        let settings: Value
        do throws(ServiceError) {
            settings = try resolvedSettings(context.config)
        } catch {
            for service in manifest.services { entries.append(ServiceEntry(placeholder(service), failed: error)) }
            return entries
        }
        // Declared in full when an earlier run recorded the plugin's declarations, read when
        // documentation, completion or a first use asks: none of them need start the plugin.
        let recorded = RecordedDeclarations(PluginDeclarationCache(manifest: manifest, settings: settings, dataDirectory: context.dataDirectory))
        let start = PluginStart(manifest: manifest, settings: settings, limits: limits, launcher: launcher, recorded: recorded)
        // A process plugin never seen before declares its services only in its answer to
        // `initialize`: a task touching one waits for that answer without holding the loop.
        if case .process = manifest.kind { launcher?.register(start) }
        for service in manifest.services {
            let declaration = { @Sendable [manifest] () -> AnyInterface in
                // The record names exactly the manifest's services, or it does not hold.
                guard let declared = recorded.declarations?.first(where: { $0.name == service }) else { return placeholder(service) }
                return PluginService.interface(declared) { _, _, reply in
                    reply(.failure(ServiceError(.unavailable, "plugin '\(manifest.name)' has not started")))
                }
            }
            entries.append(ServiceEntry(named: service, declaration: declaration) { () throws(ServiceError) in try start.service(named: service) })
        }
        return entries
    }

    /// The plugin's section with defaults applied; a value of the wrong type names the key and
    /// the type it must have (the host adds the file and line).
    func resolvedSettings(_ section: Value) throws(ServiceError) -> Value {
        var resolved: Fields = [:]
        for setting in manifest.settings {
            let given = section[setting.key]
            if given.isNull {
                if let value = setting.defaultValue { resolved[setting.key] = value }
                continue
            }
            guard setting.kind.accepts(given) else {
                throw ServiceError(.invalidArgument, "[\(manifest.name)] \(setting.key) must be \(setting.kind.rawValue), got \(given.typeName) (plugin '\(manifest.name)' in \(manifest.folder))")
            }
            resolved[setting.key] = given
        }
        return .object(resolved)
    }
}
