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
        let start = PluginStart(manifest: manifest, settings: settings, limits: limits, launcher: launcher)
        // Declared in full when an earlier run recorded the plugin's declarations: documentation
        // and completion need not start it.
        let known = PluginDeclarationCache(manifest: manifest, settings: settings, dataDirectory: context.dataDirectory).load()
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

/// Starts one plugin once, for whichever of its services is touched first; remembers the
/// services it made, or why it could not start.
private final class PluginStart: Sendable {
    let manifest: PluginManifest
    let settings: Value
    let limits: PluginsSection
    let launcher: PluginLauncher?
    private let started = Mutex<Result<[String: any Service], ServiceError>?>(nil)

    init(manifest: PluginManifest, settings: Value, limits: PluginsSection, launcher: PluginLauncher?) {
        self.manifest = manifest
        self.settings = settings
        self.limits = limits
        self.launcher = launcher
    }

    func service(named name: String) throws(ServiceError) -> any Service {
        let services = try started.withLock { (started: inout Result<[String: any Service], ServiceError>?) -> Result<[String: any Service], ServiceError> in
            if let started { return started }
            let result: Result<[String: any Service], ServiceError>
            if let launcher {
                result = launcher.start(manifest, settings: settings, limits: limits)
            } else {
                result = .failure(ServiceError(.unavailable, "plugin '\(manifest.name)' starts only inside a running host"))
            }
            started = result
            return result
        }.get()
        guard let service = services[name] else {
            throw ServiceError(.internal, "plugin '\(manifest.name)' did not declare service '\(name)'")
        }
        return service
    }
}
