public import Model
import Services

/// The standard service plugins of the `crescent` executable.
///
/// The services themselves live in the Services target (`StandardServices`); each reads its own
/// section of `crescent.toml`.
public struct StandardPlugin: Plugin {
    public let name = "standard"

    public init() {}

    public func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] {
        try StandardServices.make(context)
    }
}

extension Plugin where Self == StandardPlugin {
    /// The standard plugins: `Host(plugins: [.standard, MyPlugin()])`.
    public static var standard: StandardPlugin { StandardPlugin() }
}
