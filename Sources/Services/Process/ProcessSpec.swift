public import Model

/// What to run and how: a program's arguments and the options of `run` and `spawn`, checked.
///
/// The program runs without a shell unless ``shell`` is set: `argv[1]` is the program (looked
/// up in `PATH` unless it holds a `/`), the rest its arguments, passed as they are.
///
/// Arguments, the folder and variables' values are bytes, as the system takes them: a Lua
/// string need not be UTF-8, and a name `files:list` gave must reach a program as it is. The
/// text properties (``argv``, ``cwd``, ``environment``) read them with each byte that is not
/// UTF-8 as U+FFFD, for messages, permission checks and fakes.
public struct ProcessSpec: Sendable {
    /// The program and its arguments as bytes; never empty.
    public var argvBytes: [[UInt8]]
    /// The folder it runs in as bytes; nil: the host's.
    public var cwdBytes: [UInt8]?
    /// Variables set (or, with nil, removed) on top of the host's environment, values as bytes.
    public var environmentBytes: [String: [UInt8]?] = [:]

    /// The program and its arguments as text.
    public var argv: [String] {
        get { argvBytes.map { String(decoding: $0, as: UTF8.self) } }
        set { argvBytes = newValue.map { Array($0.utf8) } }
    }
    /// The folder it runs in as text; nil: the host's.
    public var cwd: String? {
        get { cwdBytes.map { String(decoding: $0, as: UTF8.self) } }
        set { cwdBytes = newValue.map { Array($0.utf8) } }
    }
    /// The variables set (or, with nil, removed), values as text.
    public var environment: [String: String?] {
        get { environmentBytes.mapValues { $0.map { String(decoding: $0, as: UTF8.self) } } }
        set { environmentBytes = newValue.mapValues { $0.map { Array($0.utf8) } } }
    }
    /// Bytes written to its stdin, which is then closed; nil: `run` gives it `/dev/null`,
    /// `spawn` keeps stdin open for `write` and `closeInput`.
    public var stdin: [UInt8]?
    /// Seconds before SIGTERM goes to its group (then SIGKILL after ``killGrace``); nil: none.
    public var timeout: Double?
    /// Bytes of each stream kept; what comes after is read and dropped, and the result says so.
    public var maxBytes: Int = ProcessSpec.defaultMaxBytes
    /// True when `argv` was one command line for `/bin/sh -c`.
    public var shell = false
    /// `spawn` inside a script's task: true keeps the program running after the task ends (it
    /// belongs to the task's owner then); false ends it with the task.
    public var outliveTask = false
    /// The file to run, found and checked already (a plugin's program: ``ServiceAccess``); nil:
    /// argv[1], looked up in PATH unless it holds a `/`. argv is passed as it is either way.
    public var programFile: [UInt8]?
    /// Starts the program confined by the kernel in place of `posix_spawn` (a plugin's:
    /// ``ServiceAccess``), answering the pid of the group's leader (in a session of its own) or
    /// why it did not start; nil: started as the host's own. Arguments and variables reach it
    /// as text.
    public var confinedStart: (@Sendable (ConfinedStart) -> Result<Int32, ServiceError>)?
    /// Seconds between SIGTERM and SIGKILL when the group is ended.
    public var killGrace: Double = ProcessSpec.defaultKillGrace

    /// Output kept per stream unless `maxBytes` says otherwise: 10 MiB, as for HTTP bodies.
    public static let defaultMaxBytes = 10 << 20
    /// SIGTERM, then this long, then SIGKILL.
    public static let defaultKillGrace = 2.0
    /// The options `run` and `spawn` take.
    static let options: [OptionTable.Option] = [
        // cwd may be bytes that are not UTF-8 (a name files:list gave), checked below; a negative
        // timeout (NaN, infinite, 0 or below) reaches its own message, checked below.
        .any("cwd"), .table("env"), .any("stdin"), .any("timeout"),
        .integer("maxBytes", in: 0...Int64(Int32.max)), .boolean("shell"), .boolean("outliveTask"),
    ]

    public init(argv: [String]) {
        argvBytes = argv.map { Array($0.utf8) }
    }

    /// A spec from a script's `argv` and options; bad input is `invalid_argument` naming it.
    init(argv value: Value, options: Value) throws(ServiceError) {
        let fields = try OptionTable.check(options, Self.options)
        shell = fields["shell"]?.boolValue ?? false
        outliveTask = fields["outliveTask"]?.boolValue ?? false
        argvBytes = try Self.arguments(value, shell: shell)
        if let given = fields["cwd"] {
            guard let cwd = Self.bytes(given) else { throw ServiceError(.invalidArgument, "options.cwd must be a string, got \(given.typeName)") }
            guard !cwd.isEmpty else { throw ServiceError(.invalidArgument, "options.cwd is empty: give a folder, or leave it out for the current one") }
            try Self.checkNoNUL(cwd, "options.cwd")
            cwdBytes = cwd
        }
        if let env = fields["env"] { environmentBytes = try Self.environment(env) }
        switch fields["stdin"] ?? .null {
        case .null: break
        case .string(let text): stdin = Array(text.utf8)
        case .bytes(let bytes): stdin = bytes
        case let other: throw ServiceError(.invalidArgument, "options.stdin must be a string, got \(other.typeName)")
        }
        if let given = fields["timeout"] {
            guard let seconds = given.doubleValue else {
                throw ServiceError(.invalidArgument, "options.timeout must be a number of seconds, got \(given.typeName): leave it out for no timeout")
            }
            // A bound that NaN and infinity fail (">= -1.8e308") told nothing of what is accepted.
            guard seconds.isFinite else {
                throw ServiceError(.invalidArgument, "options.timeout must be a finite number of seconds above 0, got \(seconds.isNaN ? "nan" : seconds > 0 ? "inf" : "-inf")"
                                   + ": leave it out (nil) for no timeout")
            }
            timeout = seconds
        }
        guard timeout != 0 else {
            throw ServiceError(.invalidArgument, "options.timeout is 0, which would stop the program at once: give seconds > 0, or leave it out for no timeout")
        }
        // Checked here, not by the option's range: "must be >= 0" read as if 0 were allowed.
        if let timeout, timeout < 0 {
            throw ServiceError(.invalidArgument, "options.timeout must be a number of seconds above 0, got \(abs(timeout) < 1e15 && timeout == timeout.rounded() ? String(Int(timeout)) : String(timeout)): leave it out for no timeout")
        }
        if let bytes = fields["maxBytes"]?.integerValue { maxBytes = Int(bytes) }
    }

    /// `{ "git", "pull" }`, or with `shell = true` a command line (`"ls | wc -l"`, or `{ "ls | wc -l" }`).
    private static func arguments(_ value: Value, shell: Bool) throws(ServiceError) -> [[UInt8]] {
        var words: [[UInt8]]
        switch value {
        case .string, .bytes:
            guard shell, let line = bytes(value) else {
                throw ServiceError(.invalidArgument, "argv must be an array such as { \"ls\", \"-l\" }; to run a command line through /bin/sh, pass { shell = true }")
            }
            words = [line]
        case .array(let items):
            words = []
            for (index, item) in items.enumerated() {
                switch item {
                case .string, .bytes: words.append(bytes(item) ?? [])
                case .integer, .number: words.append(Array((item.integerValue.map(String.init) ?? "\(item.doubleValue ?? 0)").utf8))
                default: throw ServiceError(.invalidArgument, "argv[\(index + 1)] must be a string, got \(item.typeName)")
                }
            }
        case .object:
            throw ServiceError(.invalidArgument, "argv must be an array of strings such as { \"ls\", \"-l\" }, got a table with named fields")
        default:
            throw ServiceError(.invalidArgument, "argv must be an array of strings such as { \"ls\", \"-l\" }, got \(value.typeName)")
        }
        guard let program = words.first else {
            throw ServiceError(.invalidArgument, "argv is empty: it needs at least the program, as in { \"ls\" }")
        }
        guard !program.isEmpty else { throw ServiceError(.invalidArgument, "argv[1] (the program) is an empty string") }
        for (index, word) in words.enumerated() { try checkNoNUL(word, "argv[\(index + 1)]") }
        if shell {
            guard words.count == 1 else {
                throw ServiceError(.invalidArgument, "with shell = true argv is one command line (a string), got \(words.count) words: join them, quoting as sh does")
            }
            return [Array("/bin/sh".utf8), Array("-c".utf8), program]
        }
        return words
    }

    /// A Lua string's bytes, UTF-8 or not; nil for any other value.
    private static func bytes(_ value: Value) -> [UInt8]? {
        switch value {
        case .string(let text): Array(text.utf8)
        case .bytes(let bytes): bytes
        default: nil
        }
    }

    /// `{ NAME = "value", OLD = false }`: false removes a variable the host has.
    private static func environment(_ value: Value) throws(ServiceError) -> [String: [UInt8]?] {
        guard case .object(let fields) = value else {
            if case .array([]) = value { return [:] }
            throw ServiceError(.invalidArgument, "options.env must be a table of NAME = \"value\", got an array")
        }
        var variables: [String: [UInt8]?] = [:]
        for name in fields.keys.sorted() {
            guard !name.isEmpty, !name.contains("="), !name.utf8.contains(0) else {
                throw ServiceError(.invalidArgument, "options.env has a bad variable name '\(clipped(name, limit: 40))': names have no '=' or NUL")
            }
            switch fields[name] ?? .null {
            case .string, .bytes:
                let text = bytes(fields[name] ?? .null) ?? []
                try checkNoNUL(text, "options.env.\(name)")
                variables[name] = .some(text)
            case .integer(let number): variables[name] = .some(Array(String(number).utf8))
            case .bool(false): variables[name] = .some(nil)
            case let other:
                throw ServiceError(.invalidArgument, "options.env.\(name) must be a string (or false to unset it), got \(other.typeName)")
            }
        }
        return variables
    }

    private static func checkNoNUL(_ bytes: [UInt8], _ name: String) throws(ServiceError) {
        guard !bytes.contains(0) else {
            throw ServiceError(.invalidArgument, "\(name) holds a NUL byte, which no program can receive: remove it")
        }
    }

    /// The program as messages name it.
    public var programName: String { shell ? "/bin/sh" : (argvBytes.first.map(ByteText.shown) ?? "") }
}
