/// A bundle of services a host loads: it reads its section of the config file and makes its
/// services.
///
/// ```swift
/// struct CounterPlugin: Plugin {
///     let name = "counter"
///     func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] {
///         [Counter(step: context.config["step"].integerValue ?? 1)]
///     }
/// }
/// ```
public protocol Plugin: Sendable {
    /// The plugin's name: its config section (`[counter]` in `crescent.toml`).
    var name: String { get }
    /// Makes the plugin's services. Throw `invalid_argument` for a bad setting, naming it.
    func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service]
}

/// What a plugin gets to make its services.
public struct PluginContext: Sendable {
    /// The plugin's section of the config file (an empty object when there is none).
    public let config: Value
    /// Every section of the config file, for plugins that serve several services.
    public let sections: [String: Value]
    /// Where services keep their data (`--data-dir`), nil for the default.
    public let dataDirectory: String?
    /// Settings given on the command line, by name (`location` for `--location`).
    public let settings: [String: String]
    /// The host's clock: services read time and wait through it only.
    public let clock: any ServiceClock

    public init(config: Value = .object([:]), sections: [String: Value] = [:], dataDirectory: String? = nil,
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
