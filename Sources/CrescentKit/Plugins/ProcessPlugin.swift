import Model

/// A plugin that runs as a program of its own and speaks JSON-RPC on its stdin and stdout.
enum ProcessPlugin {
    static func start(_ manifest: PluginManifest, command: [String], settings: Value, limits: PluginsSection,
                      parent: Host) -> Result<[String: any Service], PluginProblem> {
        .failure(PluginProblem("plugin '\(manifest.name)': process plugins are not supported yet"))
    }
}
