public import Model
import Services

/// The standard service plugins of the `crescent` executable.
///
/// The services themselves live in the Services target (`StandardServices`); each reads its own
/// section of `crescent.toml`.
public struct StandardPlugin: Plugin {
    public let name = "standard"

    public init() {}

    public func serviceEntries(_ context: PluginContext) throws(ServiceError) -> [ServiceEntry] {
        StandardServices.entries(context)
    }

    public var settingKeys: [String: [String]] { StandardServices.settingKeys }
}

extension Plugin where Self == StandardPlugin {
    /// The standard plugins: `Host(plugins: [.standard, MyPlugin()])`.
    public static var standard: StandardPlugin { StandardPlugin() }
}
