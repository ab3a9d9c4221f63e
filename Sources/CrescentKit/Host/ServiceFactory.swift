public import Model

/// Why a host could not be set up: a bad config file or a plugin that refused its settings.
public struct HostSetupError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// Makes the services of a host's plugins, each with its section of the config file.
public enum ServiceFactory {
    /// The services of `plugins`, in order; names must be unique.
    public static func makeServices(plugins: [any Plugin], options: HostOptions,
                                    clock: any ServiceClock = SystemClock.shared) throws(HostSetupError) -> [any Service] {
        guard !plugins.isEmpty else { return [] }
        let config = try ConfigFile.load(options.configPath)
        var settings: [String: String] = [:]
        if let location = options.location { settings["location"] = location }
        var services: [any Service] = []
        var names: Set<String> = []
        for plugin in plugins {
            let context = PluginContext(config: config[plugin.name] ?? .object([:]), sections: config,
                                        dataDirectory: options.dataDirectory, settings: settings, clock: clock)
            let made: [any Service]
            do {
                made = try plugin.makeServices(context)
            } catch {
                throw HostSetupError(description: "plugin '\(plugin.name)': \(error.message)")
            }
            for service in made {
                let name = service.interface.name
                guard names.insert(name).inserted else {
                    throw HostSetupError(description: "plugin '\(plugin.name)': a service named '\(name)' is already registered")
                }
                services.append(service)
            }
        }
        return services
    }
}
