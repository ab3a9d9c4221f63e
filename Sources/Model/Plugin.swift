/// A bundle of services a host loads: it reads its section of the config file and provides its
/// services.
///
/// A plugin either makes its services at once (``makeServices(_:)``), or declares them and makes
/// each on first use (``serviceEntries(_:)``), which is what the standard plugins do: a run that
/// never touches a service never opens its database or device. Implement one of the two.
///
/// ```swift
/// struct CounterPlugin: Plugin {
///     let name = "counter"
///     func serviceEntries(_ context: PluginContext) throws(ServiceError) -> [ServiceEntry] {
///         let step = context.config["step"].integerValue ?? 1
///         return [ServiceEntry(Counter.declaration) { () throws(ServiceError) in Counter(step: step) }]
///     }
/// }
/// ```
public protocol Plugin: Sendable {
    /// The plugin's name: its config section (`[counter]` in `crescent.toml`).
    var name: String { get }
    /// Makes the plugin's services now. Throw `invalid_argument` for a bad setting, naming it.
    func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service]
    /// The plugin's services, declared now and made on first use. Throwing here refuses the whole
    /// plugin; a mistake that concerns one service belongs in its entry
    /// (``ServiceEntry/init(_:failed:)``), so the others still work.
    func serviceEntries(_ context: PluginContext) throws(ServiceError) -> [ServiceEntry]
    /// The config sections the plugin reads and the keys each may hold, so the host can warn
    /// about a misspelt section or key at start. Empty (the default): only the section named
    /// after the plugin is known, and its keys are not checked.
    var settingKeys: [String: [String]] { get }
}

extension Plugin {
    public var settingKeys: [String: [String]] { [:] }

    /// Every service, made now.
    public func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] {
        var services: [any Service] = []
        for entry in try serviceEntries(context) { services.append(try entry.service()) }
        return services
    }

    /// The services ``makeServices(_:)`` makes, made now.
    public func serviceEntries(_ context: PluginContext) throws(ServiceError) -> [ServiceEntry] {
        try makeServices(context).map(ServiceEntry.init(made:))
    }
}

/// What a plugin gets to make its services.
public struct PluginContext: Sendable {
    /// The plugin's section of the config file (an empty object when there is none).
    public let config: Value
    /// Every section of the config file, for plugins that serve several services.
    public let sections: Fields
    /// Where services keep their data (`--data-dir`), nil for the default.
    public let dataDirectory: String?
    /// Settings given on the command line, by name (`location` for `--location`).
    public let settings: [String: String]
    /// The host's clock: services read time and wait through it only.
    public let clock: any ServiceClock

    public init(config: Value = .object([:]), sections: Fields = [:], dataDirectory: String? = nil,
                settings: [String: String] = [:], clock: any ServiceClock = SystemClock.shared) {
        self.config = config
        self.sections = sections
        self.dataDirectory = dataDirectory
        self.settings = settings
        self.clock = clock
    }

    /// The section named `name` (an empty object when there is none).
    public func section(_ name: String) -> Value { sections[name] ?? .object([:]) }
}
