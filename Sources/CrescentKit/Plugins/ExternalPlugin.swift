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

    var settingKeys: [String: [String]] { [manifest.name: manifest.settings.map(\.key)] }

    func serviceEntries(_ context: PluginContext) throws(ServiceError) -> [ServiceEntry] {
        let placeholders = manifest.services.map { service in
            AnyInterface(name: service, summary: "\(manifest.description) (plugin '\(manifest.name)': its methods are known once it starts)",
                         properties: [], methods: [], events: [])
        }
        let settings: Value
        do throws(ServiceError) {
            settings = try resolvedSettings(context.config)
        } catch {
            return placeholders.map { ServiceEntry($0, failed: error) }
        }
        // Declared in full when an earlier run recorded the plugin's declarations: documentation
        // and completion need not start it.
        let known = PluginDeclarationCache(manifest: manifest, settings: settings, dataDirectory: context.dataDirectory).load()
        // A process plugin never seen before declares its services only in its answer to
        // `initialize`: a task touching one waits for that answer without holding the loop.
        let startsInBackground: Bool
        if case .process = manifest.kind { startsInBackground = known == nil } else { startsInBackground = false }
        let start = PluginStart(manifest: manifest, settings: settings, limits: limits, launcher: launcher,
                                startsInBackground: startsInBackground)
        if startsInBackground { launcher?.register(start) }
        let interfaces = known.map { declarations in
            declarations.map { declaration in
                PluginService.interface(declaration) { _, _, reply in
                    reply(.failure(ServiceError(.unavailable, "plugin '\(manifest.name)' has not started")))
                }
            }
        } ?? placeholders
        return interfaces.map { interface in
            ServiceEntry(interface) { () throws(ServiceError) in try start.service(named: interface.name) }
        }
    }

    /// The plugin's section with defaults applied; a value of the wrong type names the key and
    /// the type it must have (the host adds the file and line).
    func resolvedSettings(_ section: Value) throws(ServiceError) -> Value {
        var resolved: [String: Value] = [:]
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
