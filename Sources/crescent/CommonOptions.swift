import ArgumentParser
import CrescentKit

/// The options of every way of running a script (`crescent SCRIPT.lua`, `run`, `repl`): how it
/// runs and shows itself, and (``SetupOptions``) how its services are set up. Their names come
/// from ``CommonOption``, the one table of them.
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

    @Flag(name: CommonOption.noColor.argumentName, help: "Never use colours (NO_COLOR is honoured too).")
    var noColor = false

    @Flag(name: CommonOption.keepRunning.argumentName, help: "Keep running when the commands piped on stdin end (by default the end of input quits).")
    var keepRunning = false

    // Shown as `--listen[=<name>]` (``Crescent/shown(_:)``): a bare `--listen` takes no next word.
    @Option(name: CommonOption.listen.argumentName, help: ArgumentHelp("Listen for remote control (crescent attach, eval, send …) as NAME; --listen alone: the script's name, or repl.", valueName: "name"))
    var listen: String?

    /// What a bare `--listen` becomes (`-` is no host name): listen under the default name.
    static let defaultListenName = "-"

    @OptionGroup var setup: SetupOptions

    /// The values given, as plain data.
    var settings: CommonSettings {
        var settings = setup.settings
        settings.ui = ui
        settings.failFast = failFast
        settings.timeout = timeout
        settings.memoryLimit = memoryLimit
        settings.noColor = noColor
        settings.keepRunning = keepRunning
        settings.listen = listen
        return settings
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
        options.outputIsTerminal = ProcessIO.isTerminal(1)
        options.errorIsTerminal = ProcessIO.isTerminal(2)
        options.ui = options.outputIsTerminal ? .live : .plain
        options.colors = ProcessIO.environment("NO_COLOR") == nil && ProcessIO.isTerminal(2)
        options.argumentBytes = RawArguments.trailing(parsed: arguments)
        options.pluginSearch = PluginSearch()
        return options
    }
}
