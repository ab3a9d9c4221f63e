public import Model

/// Why a host could not be set up: a bad config file or a plugin that refused its settings.
public struct HostSetupError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

/// Collects the services of a host's plugins, each with its section of the config file. Nothing
/// is made here: each service is made when a script first touches it.
public enum ServiceFactory {
    /// The service entries of a host's plugins, and what to tell at start about the config file.
    public struct Setup: Sendable {
        /// The entries of every plugin, in order; names are unique.
        public let entries: [ServiceEntry]
        /// `crescent:` lines for the start of the run: misspelt sections and keys (warnings) and
        /// settings a service refused (errors: that service fails when used, the others run),
        /// each naming the file and line.
        public let notices: [String]
        /// The config file's `[host]` section (`listen`).
        public var hostSection: Value = .object([:])
    }

    /// The service entries of `plugins`, in order; names must be unique.
    public static func entries(plugins: [any Plugin], options: HostOptions,
                               clock: any ServiceClock = SystemClock.shared) throws(HostSetupError) -> [ServiceEntry] {
        try setup(plugins: plugins, options: options, clock: clock).entries
    }

    /// The entries of `plugins` and the notices about the config file, which is read once.
    public static func setup(plugins: [any Plugin], options: HostOptions,
                             clock: any ServiceClock = SystemClock.shared) throws(HostSetupError) -> Setup {
        guard !plugins.isEmpty else { return Setup(entries: [], notices: []) }
        let config = try ConfigFile.load(options.configPath)
        var settings: [String: String] = [:]
        if let location = options.location { settings["location"] = location }
        var entries: [ServiceEntry] = []
        var names: Set<String> = []
        for plugin in plugins {
            let context = PluginContext(config: config.sections[plugin.name] ?? .object([:]), sections: config.sections,
                                        dataDirectory: options.dataDirectory, settings: settings, clock: clock)
            let provided: [ServiceEntry]
            do {
                provided = try plugin.serviceEntries(context)
            } catch {
                throw HostSetupError(description: "plugin '\(plugin.name)': \(error.message)")
            }
            for entry in provided {
                guard names.insert(entry.name).inserted else {
                    throw HostSetupError(description: "plugin '\(plugin.name)': a service named '\(entry.name)' is already registered")
                }
                entries.append(entry)
            }
        }
        var notices = config.warnings(plugins: plugins).map { "warning: \($0)" }
        var reported: Set<String> = []
        for entry in entries {
            guard let error = entry.setupError, reported.insert(error.message).inserted else { continue }
            let users = entries.filter { $0.setupError?.message == error.message }.map { "services.\($0.name)" }
            notices.append("error: \(config.locate(error.message)) (\(users.joined(separator: ", ")) \(users.count == 1 ? "fails" : "fail") when used)")
        }
        return Setup(entries: entries, notices: notices, hostSection: config.sections["host"] ?? .object([:]))
    }
}
