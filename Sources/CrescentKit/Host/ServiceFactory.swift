public import Model
#if canImport(Glibc)
import Glibc
#endif

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
        /// The plugin folders found but skipped, for the error of a script that uses one.
        public var skipped: [SkippedPlugin] = []
    }

    /// The service entries of `plugins`, in order; names must be unique.
    public static func entries(plugins: [any Plugin], options: HostOptions,
                               clock: any ServiceClock = SystemClock.shared) throws(HostSetupError) -> [ServiceEntry] {
        try setup(plugins: plugins, options: options, clock: clock).entries
    }

    /// The entries of `plugins`, then of the plugin folders `options.pluginSearch` finds, and the
    /// notices about the config file (read once) and the plugins that cannot be used.
    ///
    /// - Parameter launcher: starts the folders' plugins on first use; without one (no running
    ///   host: `crescent services`) their services are listed but cannot start.
    public static func setup(plugins: [any Plugin], options: HostOptions, clock: any ServiceClock = SystemClock.shared,
                             launcher: PluginLauncher? = nil) throws(HostSetupError) -> Setup {
        guard !plugins.isEmpty || options.pluginSearch != nil else { return Setup(entries: [], notices: []) }
        let config = try ConfigFile.load(options.configPath)
        let builtins = try collect(plugins: plugins, config: config, options: options, clock: clock)
        let limits = PluginsSection(config.sections["plugins"])
        var found: [DiscoveredPlugin] = []
        if let search = options.pluginSearch {
            found = PluginDiscovery.discover(search, disabledNames: limits.disabled, builtins: builtins.map(\.name))
        }
        let external: [any Plugin] = found.compactMap { plugin in
            guard case .ok(let manifest) = plugin.status else { return nil }
            return ExternalPlugin(manifest: manifest, limits: limits, launcher: launcher)
        }
        let entries = builtins + (try collect(plugins: external, config: config, options: options, clock: clock))
        var notices = config.warnings(plugins: plugins + external).map { "warning: \($0)" }
        // A limit every plugin runs under, of the wrong type: no default is guessed for it (as
        // `[http] timeout = "x"` fails its service), and nothing starts.
        if let problem = limits.problems.first { throw HostSetupError(description: config.locate(problem)) }
        var skipped: [SkippedPlugin] = []
        for plugin in found {
            guard case .broken(let problem) = plugin.status else { continue }
            // `--plugin nope`: a folder the command line names that is not there is a mistake in
            // the command, not a plugin to skip (the run went on and exited 0).
            if options.pluginSearch?.folders.contains(plugin.folder) == true, access(plugin.folder, F_OK) != 0 {
                throw HostSetupError(description: "--plugin \(problem.message)")
            }
            notices.append("error: \(problem.message) (plugin skipped)")
            let name = plugin.folder.split(separator: "/").last.map(String.init) ?? plugin.folder
            skipped.append(SkippedPlugin(name: name, folder: plugin.folder, reason: problem.message))
        }
        if let search = options.pluginSearch, !search.disabled {
            notices += unknownDisabled(limits.disabled, builtins: plugins.map(\.name) + builtins.map(\.name),
                                       found: found.compactMap { $0.manifest?.name }, config: config)
        }
        notices += setupNotices(entries, config: config)
        let hostSection = config.sections["host"] ?? .object([:])
        if let problem = RemoteServer.settingProblem(hostSection["listen"]) {
            throw HostSetupError(description: config.locate(problem))
        }
        return Setup(entries: entries, notices: notices, hostSection: hostSection, skipped: skipped)
    }

    /// `[plugins] disabled` names that no plugin folder has: a misspelling (`gret` for `greet`),
    /// whose plugin would load without a word, or a builtin (`location`, `standard`), which
    /// `disabled` cannot turn off. Each is named with the plugins it can turn off.
    private static func unknownDisabled(_ names: [String], builtins: [String], found: [String], config: ConfigFile) -> [String] {
        let unknown = names.filter { !found.contains($0) }
        // Nothing to warn about in nearly every run: the listing is built only for a warning (a
        // joined array's type is made on first use by scanning every protocol conformance in
        // the binary, which every start with a plugin installed paid).
        guard !unknown.isEmpty else { return [] }
        let plugins = found.isEmpty ? "none was found" : found.sorted().joined(separator: ", ")
        return unknown.map { name in
            if builtins.contains(name) {
                return "warning: " + config.locate("[plugins] disabled names '\(name)', which is built into crescent and cannot be turned "
                    + "off, so it turns nothing off; disabled takes the names of plugins found in plugin folders (plugins: \(plugins))")
            }
            let closest = NameSuggestion.closest(to: name, among: found)
            return "warning: " + config.locate("[plugins] disabled names no plugin '\(name)', so it turns nothing off (plugins: "
                + plugins + (closest.map { "; did you mean '\($0)'?" } ?? "") + ")")
        }
    }

    /// The entries of `plugins`, in order; a service name given twice is an error.
    private static func collect(plugins: [any Plugin], config: ConfigFile, options: HostOptions,
                                clock: any ServiceClock) throws(HostSetupError) -> [ServiceEntry] {
        var settings: [String: String] = [:]
        if let location = options.location { settings["location"] = location }
        var entries: [ServiceEntry] = []
        var names = NameSet()
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
                guard names.insert(entry.name) else {
                    throw HostSetupError(description: "plugin '\(plugin.name)': a service named '\(entry.name)' is already registered")
                }
                entries.append(entry)
            }
        }
        return entries
    }

    /// One error per setting a service refused, naming `file:line` and the services that fail.
    private static func setupNotices(_ entries: [ServiceEntry], config: ConfigFile) -> [String] {
        var notices: [String] = []
        var reported: Set<String> = []
        for entry in entries {
            guard let error = entry.setupError, reported.insert(error.message).inserted else { continue }
            let users = entries.filter { $0.setupError?.message == error.message }.map { "services.\($0.name)" }
            notices.append("error: \(config.locate(error.message)) (\(users.joined(separator: ", ")) \(users.count == 1 ? "fails" : "fail") when used)")
        }
        return notices
    }
}
