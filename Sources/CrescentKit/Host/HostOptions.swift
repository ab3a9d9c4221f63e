import Services

/// How a host runs: limits, error policy, output and the script's arguments.
public struct HostOptions: Sendable {
    /// How the view is rendered (`--ui`).
    public enum UIMode: String, Sendable, CaseIterable {
        case live, plain, json
    }

    /// Log levels for `log.*` and the host's own messages, lowest first.
    /// Named by strings, not numbers: `--log-level`'s help shows a case's raw value as its default.
    public enum LogLevel: String, Sendable, CaseIterable, Comparable {
        case debug, info, warn, error

        /// The level's name, as `--log-level` and `log.<name>` spell it.
        public var name: String { rawValue }

        public init?(name: String) {
            guard let level = Self(rawValue: name.lowercased()) else { return nil }
            self = level
        }

        /// The levels' order, debug lowest.
        private var rank: Int {
            switch self {
            case .debug: 0
            case .info: 1
            case .warn: 2
            case .error: 3
            }
        }

        public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
    }

    /// The VM's allocation limit in MiB; 0 for none. Default 1024.
    public var memoryLimitMiB: Int = 1024
    /// Stop the run after this many seconds (exit 1); nil for no limit.
    public var timeout: Double?
    /// Stop at the first error reported from a handler instead of carrying on.
    public var failFast = false
    public var logLevel: LogLevel = .info
    public var ui: UIMode = .plain
    /// Whether stdout is a terminal, decided once at start. `plain` then writes the control
    /// characters of a view's text as escapes (`\u{1B}`), as `live` does, so a feed's title
    /// cannot clear or retitle the person's terminal; to a pipe or a file the text goes byte for
    /// byte.
    public var outputIsTerminal = false
    /// Whether stderr is a terminal, decided once at start: what a controller app held while it
    /// had the whole terminal is written out after it with its control characters as escapes
    /// there, byte for byte to a pipe or a file (as `outputIsTerminal` decides for stdout).
    public var errorIsTerminal = false
    public var colors = false
    /// The width views are laid out in; nil for the terminal's (else `COLUMNS`, else 80).
    public var columns: Int?
    /// The interpreter name, `arg[-1]` (`crescent`).
    public var interpreter = "crescent"
    /// `--config FILE`: the services' config (default `crescent.toml` in the current folder).
    public var configPath: String?
    /// `--data-dir DIR`: where services keep their data.
    public var dataDirectory: String?
    /// `--location PROVIDER:ARGS`: the location provider.
    public var location: String?
    /// `--keep-running`: when stdin's commands end, the run goes on (by default the end of input
    /// ends the run as `quit` does).
    public var keepsRunningAfterInput = false
    /// Where to look for plugin folders (`--plugin DIR`, `--no-plugins`); nil loads none (a
    /// host built in Swift gets only the plugins it is given).
    public var pluginSearch: PluginSearch?
    /// The script's arguments as the bytes given (UTF-8 or not, as `lua5.4` keeps them):
    /// `arg[1...]` and `app.args`.
    public var argumentBytes: [[UInt8]] = []
    /// The script's arguments as text (each byte that is not UTF-8 as U+FFFD).
    public var arguments: [String] {
        get { argumentBytes.map { String(decoding: $0, as: UTF8.self) } }
        set { argumentBytes = newValue.map { Array($0.utf8) } }
    }
    /// The chunks of the `-e` options before the last (`crescent -e 'x = 1' -e 'print(x)'`),
    /// run in order before the main chunk as `lua5.4` runs each `-e`; an error in one stops the
    /// run there.
    public var precedingChunks: [String] = []
    /// `--listen[=NAME]`: listen for remote control as NAME; empty for the default name (the
    /// script's base name, `repl` for the REPL); nil to follow `[host] listen` in the config.
    public var listen: String?
    /// Whether the first touch of a plugin whose permissions are not granted asks the person at
    /// the terminal to grant them (y/n) before refusing: the `crescent` command's script runs and
    /// REPL set it; tests and hosts built in Swift never ask.
    public var asksForPermissions = false

    public init() {}

    /// What is wrong with a location setting's provider name (`fixd:1,2`), with the setting it
    /// most likely meant, or with its argument (`fixed:1`, `gpx:` with no file or a file that
    /// cannot be read, a gpsd port out of range); nil when neither is wrong.
    public static func locationProblem(_ setting: String) -> String? {
        LocationProviderSpec.unknownProvider(setting) ?? LocationProviderSpec.argumentProblem(setting)
    }
}
