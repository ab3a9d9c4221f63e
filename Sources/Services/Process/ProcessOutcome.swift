import Glibc
public import Model

/// How a program ended, and what it wrote: the result of `run`, and (without the output) the
/// payload of a spawned process's `didExit`.
public struct ProcessOutcome: Sendable, Equatable {
    /// The exit status, nil when a signal ended it.
    public var status: Int?
    /// The signal that ended it (`"SIGKILL"`), nil when it exited.
    public var signal: String?
    public var stdout: [UInt8] = []
    public var stderr: [UInt8] = []
    /// True when a stream passed `maxBytes` and was cut there (the rest was read and dropped).
    public var truncated = false
    /// True when `timeout` passed and the process group was sent SIGTERM.
    public var timedOut = false

    /// The outcome `waitpid` reported as `status`.
    init(waitStatus status: Int32) {
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which are macros Swift does not import.
        let signal = status & 0x7f
        if signal == 0 {
            self.status = Int((status >> 8) & 0xff)
        } else {
            self.signal = Self.signalName(signal)
        }
    }

    public init(status: Int?, signal: String? = nil, stdout: [UInt8] = [], stderr: [UInt8] = []) {
        self.status = status
        self.signal = signal
        self.stdout = stdout
        self.stderr = stderr
    }

    /// The outcome with each stream kept to its first `limit` bytes (`maxBytes`), `truncated`
    /// when one was cut: what a faked `run` answers, as the pipes of a real one would keep it.
    func kept(to limit: Int) -> ProcessOutcome {
        var kept = self
        if stdout.count > limit || stderr.count > limit {
            kept.truncated = true
            kept.stdout = Array(stdout.prefix(limit))
            kept.stderr = Array(stderr.prefix(limit))
        }
        return kept
    }

    /// `{ status, signal, stdout, stderr, truncated, timedOut }` as scripts see it.
    public var value: Value {
        .model(DataModel(Self.schema, [status.map { .integer(Int64($0)) } ?? .null, signal.map(Value.string) ?? .null,
                                       .bytes(stdout), .bytes(stderr), .bool(truncated), .bool(timedOut)]))
    }

    /// The fields of ``value``'s data model, declared once (a misspelled read names them).
    static let schema = ModelSchema("processResult", ["status", "signal", "stdout", "stderr", "truncated", "timedOut"])

    /// `{ status, signal, timedOut }`: `didExit`'s payload and `wait()`'s answer.
    public var exitValue: Value {
        .model(DataModel(Self.exitSchema, [status.map { .integer(Int64($0)) } ?? .null, signal.map(Value.string) ?? .null, .bool(timedOut)]))
    }

    /// `didExit`'s payload for a program that could not start: `error` names it, status and
    /// signal are nil.
    static func failedStartValue(_ message: String) -> Value {
        .model(DataModel(exitSchema, [.null, .null, .bool(false), .string(message)]))
    }

    /// The fields of `didExit`'s payload, declared once: a misspelled read (`e.stauts`) names
    /// them, where a plain table read nil.
    static let exitSchema = ModelSchema("processExit", ["status", "signal", "timedOut", "error"])

    /// The signals scripts name, by number (Linux numbering).
    static let signalNames: [Int32: String] = [
        SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
        SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGUSR1: "SIGUSR1",
        SIGSEGV: "SIGSEGV", SIGUSR2: "SIGUSR2", SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM",
        SIGCHLD: "SIGCHLD", SIGCONT: "SIGCONT", SIGSTOP: "SIGSTOP", SIGTSTP: "SIGTSTP", SIGTTIN: "SIGTTIN",
        SIGTTOU: "SIGTTOU", SIGURG: "SIGURG", SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ", SIGVTALRM: "SIGVTALRM",
        SIGPROF: "SIGPROF", SIGWINCH: "SIGWINCH", SIGIO: "SIGIO", SIGSYS: "SIGSYS",
    ]

    static func signalName(_ number: Int32) -> String { signalNames[number] ?? "SIG\(number)" }

    /// The signal `name` names (`"TERM"`, `"SIGTERM"`, `"term"`) or that `number` is.
    static func signalNumber(_ value: Value) throws(ServiceError) -> Int32 {
        if let number = value.integerValue, let known = signalNames.keys.first(where: { Int64($0) == number }) { return known }
        if let name = value.stringValue {
            let upper = name.uppercased()
            let full = upper.hasPrefix("SIG") ? upper : "SIG" + upper
            if let known = signalNames.first(where: { $0.value == full }) { return known.key }
        }
        // `SIGKIL`, `TREM`: the signal it most likely meant.
        let closest = value.stringValue.flatMap { name -> String? in
            let upper = name.uppercased()
            return NameSuggestion.closest(to: upper.hasPrefix("SIG") ? upper : "SIG" + upper, among: signalNames.values.sorted(), prefixes: false)
        }
        throw ServiceError(.invalidArgument, "signal must be a name such as \"SIGTERM\", \"SIGINT\" or \"SIGKILL\" (or its number), got \(clipped(value.integerValue.map { "\($0), not a signal this host knows" } ?? value.stringValue ?? value.typeName, limit: 60))"
                           + (closest.map { "; did you mean '\($0)'?" } ?? ""))
    }
}
