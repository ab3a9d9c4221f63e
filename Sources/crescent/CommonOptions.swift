import ArgumentParser
import CrescentKit

/// The options every way of running Crescent shares.
struct CommonOptions: ParsableArguments {
    @Option(name: .customLong("ui"), help: ArgumentHelp("How views are shown: live, plain or json.", valueName: "mode"))
    var ui: String?

    @Flag(name: .customLong("fail-fast"), help: "Stop at the first error reported from a handler.")
    var failFast = false

    // Unconditional: `--timeout -1` is a wrong value, not a missing one, and validate says so.
    @Option(parsing: .unconditional, help: ArgumentHelp("Stop the run after this many seconds (exit 1).", valueName: "seconds"))
    var timeout: Double?

    @Option(name: .customLong("memory-limit"), parsing: .unconditional, help: ArgumentHelp("The Lua VM's memory limit in MiB; 0 for none.", valueName: "mib"))
    var memoryLimit = CommonOptions.defaultMemoryLimit

    @Option(help: ArgumentHelp("The config file (default: crescent.toml in the current folder).", valueName: "file"))
    var config: String?

    @Option(name: .customLong("data-dir"), help: ArgumentHelp("Where services keep their data.", valueName: "dir"))
    var dataDir: String?

    @Option(help: ArgumentHelp("The location provider, e.g. fixed:48.85,2.35 or gpsd:127.0.0.1:2947.", valueName: "provider:args"))
    var location: String?

    @Flag(name: .customLong("no-color"), help: "Never use colours (NO_COLOR is honoured too).")
    var noColor = false

    @Flag(name: .customLong("keep-running"), help: "Keep running when the commands piped on stdin end (by default the end of input quits).")
    var keepRunning = false

    @Option(name: .customLong("log-level"), help: ArgumentHelp("The lowest log level shown: debug, info, warn or error.", valueName: "level"))
    var logLevel: String = CommonOptions.defaultLogLevel

    static let defaultMemoryLimit = 1024
    static let defaultLogLevel = "info"

    func validate() throws {
        if let timeout, !(timeout > 0 && timeout.isFinite) {
            let shown = timeout == timeout.rounded() && abs(timeout) < 1e15 ? String(Int64(timeout)) : String(timeout)
            throw ValidationError("--timeout must be a positive number of seconds, got \(shown)")
        }
        if let ui, HostOptions.UIMode(rawValue: ui) == nil {
            throw ValidationError("--ui must be one of live, plain, json; got '\(ui)'")
        }
        for (flag, value) in [("--data-dir", dataDir), ("--config", config), ("--location", location)] where value?.isEmpty == true {
            throw ValidationError("\(flag) needs a value, got an empty string")
        }
        if memoryLimit < 0 { throw ValidationError("--memory-limit must be 0 (no limit) or a number of MiB, got \(memoryLimit)") }
        if HostOptions.LogLevel(name: logLevel) == nil {
            throw ValidationError("--log-level must be one of debug, info, warn, error; got '\(logLevel)'")
        }
    }

    /// The host options these flags describe, for a script with `arguments`.
    func hostOptions(arguments: [String]) -> HostOptions {
        Self.hostOptions(ui: ui, failFast: failFast, timeout: timeout, memoryLimit: memoryLimit, config: config,
                         dataDir: dataDir, location: location, noColor: noColor, logLevel: logLevel,
                         keepRunning: keepRunning, arguments: arguments)
    }

    /// The host options for these flag values; the defaults are a command line without options.
    static func hostOptions(ui: String? = nil, failFast: Bool = false, timeout: Double? = nil,
                            memoryLimit: Int = defaultMemoryLimit, config: String? = nil, dataDir: String? = nil,
                            location: String? = nil, noColor: Bool = false, logLevel: String = defaultLogLevel,
                            keepRunning: Bool = false, arguments: [String]) -> HostOptions {
        var options = HostOptions()
        options.memoryLimitMiB = memoryLimit
        options.timeout = timeout
        options.failFast = failFast
        options.logLevel = HostOptions.LogLevel(name: logLevel) ?? .info
        options.ui = ui.flatMap(HostOptions.UIMode.init(rawValue:)) ?? (ProcessIO.isTerminal(1) ? .live : .plain)
        options.colors = !noColor && ProcessIO.environment("NO_COLOR") == nil && ProcessIO.isTerminal(2)
        options.configPath = config
        options.dataDirectory = dataDir
        options.location = location
        options.keepsRunningAfterInput = keepRunning
        options.arguments = arguments
        return options
    }
}
