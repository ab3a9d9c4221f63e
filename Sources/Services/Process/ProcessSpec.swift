import Model

/// What to run and how: a program's arguments and the options of `run` and `spawn`, checked.
///
/// The program runs without a shell unless ``shell`` is set: `argv[1]` is the program (looked
/// up in `PATH` unless it holds a `/`), the rest its arguments, passed as they are.
public struct ProcessSpec: Sendable {
    /// The program and its arguments; never empty.
    public var argv: [String]
    /// The folder it runs in; nil: the host's.
    public var cwd: String?
    /// Variables set (or, with nil, removed) on top of the host's environment.
    public var environment: [String: String?] = [:]
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
    /// Seconds between SIGTERM and SIGKILL when the group is ended.
    public var killGrace: Double = ProcessSpec.defaultKillGrace

    /// Output kept per stream unless `maxBytes` says otherwise: 10 MiB, as for HTTP bodies.
    public static let defaultMaxBytes = 10 << 20
    /// SIGTERM, then this long, then SIGKILL.
    public static let defaultKillGrace = 2.0
    /// The options `run` and `spawn` take.
    static let options: [OptionTable.Option] = [
        .string("cwd"), .table("env"), .any("stdin"), .number("timeout", in: 0...),
        .integer("maxBytes", in: 0...Int64(Int32.max)), .boolean("shell"), .boolean("outliveTask"),
    ]

    public init(argv: [String]) {
        self.argv = argv
    }

    /// A spec from a script's `argv` and options; bad input is `invalid_argument` naming it.
    init(argv value: Value, options: Value) throws(ServiceError) {
        let fields = try OptionTable.check(options, Self.options)
        shell = fields["shell"]?.boolValue ?? false
        outliveTask = fields["outliveTask"]?.boolValue ?? false
        argv = try Self.arguments(value, shell: shell)
        if let cwd = fields["cwd"]?.stringValue {
            guard !cwd.isEmpty else { throw ServiceError(.invalidArgument, "options.cwd is empty: give a folder, or leave it out for the current one") }
            try Self.checkNoNUL(cwd, "options.cwd")
            self.cwd = cwd
        }
        if let env = fields["env"] { environment = try Self.environment(env) }
        switch fields["stdin"] ?? .null {
        case .null: break
        case .string(let text): stdin = Array(text.utf8)
        case .bytes(let bytes): stdin = bytes
        case let other: throw ServiceError(.invalidArgument, "options.stdin must be a string, got \(other.typeName)")
        }
        timeout = fields["timeout"]?.doubleValue
        guard timeout != 0 else {
            throw ServiceError(.invalidArgument, "options.timeout is 0, which would stop the program at once: give seconds > 0, or leave it out for no timeout")
        }
        if let bytes = fields["maxBytes"]?.integerValue { maxBytes = Int(bytes) }
    }

    /// `{ "git", "pull" }`, or with `shell = true` a command line (`"ls | wc -l"`, or `{ "ls | wc -l" }`).
    private static func arguments(_ value: Value, shell: Bool) throws(ServiceError) -> [String] {
        var words: [String]
        switch value {
        case .string(let line):
            guard shell else {
                throw ServiceError(.invalidArgument, "argv must be an array such as { \"ls\", \"-l\" }; to run a command line through /bin/sh, pass { shell = true }")
            }
            words = [line]
        case .array(let items):
            words = []
            for (index, item) in items.enumerated() {
                switch item {
                case .string(let text): words.append(text)
                case .integer, .number: words.append(item.integerValue.map(String.init) ?? "\(item.doubleValue ?? 0)")
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
            return ["/bin/sh", "-c", program]
        }
        return words
    }

    /// `{ NAME = "value", OLD = false }`: false removes a variable the host has.
    private static func environment(_ value: Value) throws(ServiceError) -> [String: String?] {
        guard case .object(let fields) = value else {
            if case .array([]) = value { return [:] }
            throw ServiceError(.invalidArgument, "options.env must be a table of NAME = \"value\", got an array")
        }
        var variables: [String: String?] = [:]
        for name in fields.keys.sorted() {
            guard !name.isEmpty, !name.contains("="), !name.utf8.contains(0) else {
                throw ServiceError(.invalidArgument, "options.env has a bad variable name '\(clipped(name, limit: 40))': names have no '=' or NUL")
            }
            switch fields[name] ?? .null {
            case .string(let text):
                try checkNoNUL(text, "options.env.\(name)")
                variables[name] = .some(text)
            case .integer(let number): variables[name] = .some(String(number))
            case .bool(false): variables[name] = .some(nil)
            case let other:
                throw ServiceError(.invalidArgument, "options.env.\(name) must be a string (or false to unset it), got \(other.typeName)")
            }
        }
        return variables
    }

    private static func checkNoNUL(_ text: String, _ name: String) throws(ServiceError) {
        guard !text.utf8.contains(0) else {
            throw ServiceError(.invalidArgument, "\(name) holds a NUL byte, which no program can receive: remove it")
        }
    }

    /// The program as messages name it.
    public var programName: String { shell ? "/bin/sh" : argv[0] }
}
