public import NIOCore
public import Model

extension RemoteServer {
    /// Starts remote control when the command line (`--listen[=NAME]`) or the config file
    /// (`[host] listen = true` or `"NAME"`) asks for it; nil when neither does. Call it off the
    /// host loop, before the main chunk runs.
    ///
    /// - Parameters:
    ///   - defaultName: the name without `--listen=NAME`: a script's base name, `repl`.
    ///   - exclusive: whether the default name is the host's own (a script's: a live host with
    ///     it is an error) or may be numbered (`repl-2`). An explicit name is always exclusive.
    ///   - script: what `hello` and `crescent ls` show.
    ///   - options: the host's options (`listen`, `version`).
    ///   - setting: `listen` of the host's ``Host/hostSettings`` (the config's `[host]`).
    public static func startIfAsked(host: NIOLoopBound<Host>, options: HostOptions, setting: Value, defaultName: String,
                                    exclusive: Bool, script: String) throws(RemoteError) -> NIOLoopBound<RemoteServer>? {
        guard let requested = try requestedName(options: options, setting: setting) else { return nil }
        return try start(host: host, requested: requested, defaultName: defaultName, exclusive: exclusive, script: script)
    }

    /// Starts remote control as `requested` (from ``requestedName(options:setting:)``; `""` for
    /// `defaultName`). Arguments as for ``startIfAsked(host:options:setting:defaultName:exclusive:script:)``.
    public static func start(host: NIOLoopBound<Host>, requested: String, defaultName: String, exclusive: Bool,
                             script: String) throws(RemoteError) -> NIOLoopBound<RemoteServer> {
        try listen(host: host, name: requested.isEmpty ? defaultName : requested, exclusive: exclusive || !requested.isEmpty,
                   script: script, version: CrescentVersion.current)
    }

    /// The name the command line or the config file asks remote control to listen as, `""` for
    /// the default name; nil when neither asks. Arguments as for ``startIfAsked(host:options:setting:defaultName:exclusive:script:)``.
    public static func requestedName(options: HostOptions, setting: Value) throws(RemoteError) -> String? {
        if let listen = options.listen { return listen }
        switch setting {
        case .null, .bool(false): return nil
        case .bool(true): return ""
        case .string(let name): return name
        default: throw RemoteError("[host] listen must be true, false or a name, got \(setting.typeName)")
        }
    }

    /// What is wrong with `[host] listen` in the config file (`setting`), as an error naming the
    /// section and key (``ConfigFile/locate(_:)`` adds the file and line); nil when it is
    /// absent, a boolean or a valid name. Checked when the file is read, so a wrong one is named
    /// there and not only once a host tries to listen.
    static func settingProblem(_ setting: Value) -> String? {
        switch setting {
        case .null, .bool: return nil
        case .string(let name) where ["yes", "no", "true", "false", "on", "off"].contains(name.lowercased()):
            // A quoted yes is a host name to TOML; the person meant the boolean.
            let meant = ["yes", "true", "on"].contains(name.lowercased())
            return "[host] listen = \"\(name)\" would listen as a host named '\(name)': write listen = \(meant) (no quotes), "
                + "or a name such as listen = \"groceries\""
        case .string(let name):
            do throws(RemoteError) {
                try RemoteFolder.validate(name: name)
                return nil
            } catch {
                return "[host] listen: \(error)"
            }
        default: return "[host] listen must be true, false or a name, got \(setting.typeName)"
        }
    }

    /// A host name from a script's path: its file name without `.lua` (`groceries`), with
    /// characters a name cannot hold replaced by `-`.
    public static func defaultName(forScript path: String) -> String {
        var base = path.split(separator: "/").last.map(String.init) ?? path
        if base.hasSuffix(".lua") { base.removeLast(4) }
        let cleaned = String(base.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ".") ? $0 : "-" })
        let trimmed = cleaned.drop { $0 == "." }
        return trimmed.isEmpty ? "crescent" : String(trimmed.prefix(64))
    }
}
