import ArgumentParser
import CrescentKit

/// The options that set up a host's services and plugins: what every command reading the
/// project's services takes (`services`, `plugins …`, `plugin check`), and what running a script
/// takes besides its own (``CommonOptions``). Their names come from ``CommonOption``.
struct SetupOptions: ParsableArguments {
    @Option(name: CommonOption.config.argumentName, help: ArgumentHelp("The config file (default: crescent.toml in the current folder).", valueName: "file"))
    var config: String?

    @Option(name: CommonOption.dataDir.argumentName, help: ArgumentHelp("Where services keep their data.", valueName: "dir"))
    var dataDir: String?

    @Option(name: CommonOption.location.argumentName, help: ArgumentHelp("The location provider, e.g. fixed:48.85,2.35 or gpsd:127.0.0.1:2947.", valueName: "provider:args"))
    var location: String?

    @Option(name: CommonOption.logLevel.argumentName, help: ArgumentHelp(
        "The lowest level of log messages (scripts' log.debug/info/warn/error, plugins' logs) shown on stderr: "
            + "debug (all of them), info (all but debug), warn (warnings and errors), error (errors only).",
        valueName: "level"))
    var logLevel = HostOptions().logLevel

    @Option(name: CommonOption.plugin.argumentName, help: ArgumentHelp("Load the plugin in DIR (or every plugin folder inside it) first; repeatable.", valueName: "dir"))
    var plugins: [String] = []

    @Flag(name: CommonOption.noPlugins.argumentName, help: "Load no plugin folders: only the builtin services.")
    var noPlugins = false

    /// The values given, as plain data (the run's own options at their defaults).
    var settings: CommonSettings {
        CommonSettings(config: config, dataDir: dataDir, location: location, logLevel: logLevel, plugins: plugins, noPlugins: noPlugins)
    }

    func validate() throws {
        if let problem = settings.problem { throw ValidationError(problem) }
    }

    /// The host options these flags describe, with no script arguments.
    func hostOptions() -> HostOptions {
        settings.hostOptions(arguments: [])
    }
}
