public import Model

/// The standard service plugins of the `crescent` executable.
///
/// The location, geocoder, store, session, http and feeds services are added here as they land;
/// each reads its own section of `crescent.toml`.
public struct StandardPlugin: Plugin {
    public let name = "standard"

    public init() {}

    public func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] { [] }
}

extension Plugin where Self == StandardPlugin {
    /// The standard plugins: `Host(plugins: [.standard, MyPlugin()])`.
    public static var standard: StandardPlugin { StandardPlugin() }
}
