import ArgumentParser
import CrescentKit

/// The options every way of running Crescent shares, as ArgumentParser reads them; their names
/// come from ``CommonOption``, the one table of them.
struct CommonOptions: ParsableArguments {
    @Option(name: CommonOption.ui.argumentName, help: ArgumentHelp("How views are shown (default: live on a terminal, else plain).", valueName: "mode"))
    var ui: HostOptions.UIMode?

    @Flag(name: CommonOption.failFast.argumentName, help: "Stop at the first error reported from a handler.")
    var failFast = false

    // Unconditional: `--timeout -1` is a wrong value, not a missing one, and validate says so.
    @Option(name: CommonOption.timeout.argumentName, parsing: .unconditional, help: ArgumentHelp("Stop the run after this many seconds (exit 1).", valueName: "seconds"))
    var timeout: Double?

    @Option(name: CommonOption.memoryLimit.argumentName, parsing: .unconditional, help: ArgumentHelp("The Lua VM's memory limit in MiB; 0 for none.", valueName: "mib"))
    var memoryLimit = HostOptions().memoryLimitMiB

    @Option(name: CommonOption.config.argumentName, help: ArgumentHelp("The config file (default: crescent.toml in the current folder).", valueName: "file"))
    var config: String?

    @Option(name: CommonOption.dataDir.argumentName, help: ArgumentHelp("Where services keep their data.", valueName: "dir"))
    var dataDir: String?

    @Option(name: CommonOption.location.argumentName, help: ArgumentHelp("The location provider, e.g. fixed:48.85,2.35 or gpsd:127.0.0.1:2947.", valueName: "provider:args"))
    var location: String?

    @Flag(name: CommonOption.noColor.argumentName, help: "Never use colours (NO_COLOR is honoured too).")
    var noColor = false

    @Flag(name: CommonOption.keepRunning.argumentName, help: "Keep running when the commands piped on stdin end (by default the end of input quits).")
    var keepRunning = false

    @Option(name: CommonOption.logLevel.argumentName, help: ArgumentHelp(
        "The lowest level of log messages (scripts' log.debug/info/warn/error, plugins' logs) shown on stderr: "
            + "debug (all of them), info (all but debug), warn (warnings and errors), error (errors only).",
        valueName: "level"))
    var logLevel = HostOptions().logLevel

    @Option(name: CommonOption.listen.argumentName, help: ArgumentHelp("Listen for remote control (crescent attach, eval, send …) as NAME; --listen alone: the script's name, or repl.", valueName: "name"))
    var listen: String?

    /// What a bare `--listen` becomes (`-` is no host name): listen under the default name.
    static let defaultListenName = "-"

    @Option(name: CommonOption.plugin.argumentName, help: ArgumentHelp("Load the plugin in DIR (or every plugin folder inside it) first; repeatable.", valueName: "dir"))
    var plugins: [String] = []

    @Flag(name: CommonOption.noPlugins.argumentName, help: "Load no plugin folders: only the builtin services.")
    var noPlugins = false

    /// The values given, as plain data.
    var settings: CommonSettings {
        CommonSettings(ui: ui, failFast: failFast, timeout: timeout, memoryLimit: memoryLimit, config: config, dataDir: dataDir,
                       location: location, noColor: noColor, keepRunning: keepRunning, logLevel: logLevel, listen: listen,
                       plugins: plugins, noPlugins: noPlugins)
    }

    func validate() throws {
        if let problem = settings.problem { throw ValidationError(problem) }
    }

    /// The host options these flags describe, for a script with `arguments`.
    func hostOptions(arguments: [String]) -> HostOptions {
        settings.hostOptions(arguments: arguments)
    }

    /// The host options of a command line without options: the defaults, with the output mode and
    /// colours chosen for the terminal (or not) the process runs on.
    static func defaultHostOptions(arguments: [String]) -> HostOptions {
        var options = HostOptions()
        options.ui = ProcessIO.isTerminal(1) ? .live : .plain
        options.colors = ProcessIO.environment("NO_COLOR") == nil && ProcessIO.isTerminal(2)
        options.arguments = arguments
        options.pluginSearch = PluginSearch()
        return options
    }
}
