import CLua
import LuaBridge
import Model
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The methods of DESIGN.md's table, on the host loop.
extension RemoteServer {
    typealias MethodError = JSONRPCError

    /// Application errors: a chunk that failed, a command or service that refused.
    static let failedCode = 1

    func handle(_ message: JSONRPCMessage, from connection: RemoteConnection) {
        guard let session = sessions[connection.id] else { return }
        switch message {
        case .request(let id, let method, let params):
            answer(id, method, params, session)
        case .notification(let method, let params):
            // A notification wants no answer, not even an error.
            answer(nil, method, params, session)
        case .response, .failure:
            break
        }
    }

    private func answer(_ id: JSONRPCID?, _ method: String, _ params: Value, _ session: RemoteSession) {
        let reply: (Result<Value, MethodError>) -> Void = { result in
            guard let id else { return }
            switch result {
            case .success(let value): session.connection.send(.response(id: id, result: value))
            case .failure(let error):
                session.connection.send(.failure(id: id, error: error))
            }
        }
        guard params == .null || params.isObject else {
            return reply(.failure(.invalidParams("\(method): params must be an object, got \(params.jsonKind)")))
        }
        do throws(MethodError) {
            try Self.checkParamNames(params, of: method)
            switch method {
            case "hello": reply(.success(try hello(params, session)))
            case "eval": try eval(params, session, reply)
            case "interrupt": reply(.success(["interrupted": .bool(interrupt(session))]))
            case "complete": reply(.success(try complete(params)))
            case "send": try send(params, session, reply)
            case "key": try key(params, session, reply)
            case "observe": reply(.success(try observe(params, session)))
            case "on": reply(.success(try on(params, session)))
            case "unsubscribe": reply(.success(try unsubscribe(params, session)))
            case "view": reply(.success(try view(params, session)))
            case "services": reply(.success(try services(params)))
            case "subscriptions": reply(.success(subscriptionList()))
            default:
                throw .methodNotFound(method, known: Self.methods)
            }
        } catch {
            reply(.failure(error))
        }
    }

    static let methods = ["hello", "eval", "interrupt", "complete", "send", "key", "observe", "on", "unsubscribe", "view",
                          "services", "subscriptions"]

    /// The params each method takes (DESIGN.md's table).
    static let paramNames: [String: [String]] = [
        "hello": ["output"], "eval": ["code"], "interrupt": [], "complete": ["line", "cursor"], "send": ["command", "args"],
        "key": ["keys"], "observe": ["service", "key", "initial"], "on": ["event"], "unsubscribe": ["subscription"],
        "view": ["format", "watch", "width"], "services": ["name"], "subscriptions": [],
    ]

    /// Refuses a param the method does not take: a misspelled optional one (`outpt`) would be
    /// dropped and the request would quietly do something else, and a misspelled required one
    /// would be reported only as missing.
    private static func checkParamNames(_ params: Value, of method: String) throws(MethodError) {
        guard let known = paramNames[method], case .object(let fields) = params,
              let unknown = fields.keys.first(where: { !known.contains($0) }) else { return }
        let closest = NameSuggestion.closest(to: unknown, among: known)
        throw .invalidParams("\(method): no param '\(unknown)' (\(NameSuggestion.listing("params", known, suggesting: closest)))")
    }

    // MARK: hello, services, subscriptions

    /// `hello [{ output = true }]`: who the host is; with `output`, the client follows the
    /// host's output from now on.
    private func hello(_ params: Value, _ session: RemoteSession) throws(MethodError) -> Value {
        switch params["output"] {
        case .null, .bool(false): break
        case .bool(true): follow(session.connection)
        case let other: throw .invalidParams("hello: 'output' must be a boolean, got \(other.jsonKind)")
        }
        return [
            "crescent": .string(version),
            "pid": .integer(Int64(getpid())),
            "name": .string(name),
            "script": .string(script),
            "clients": .integer(Int64(sessions.count)),
            "services": .array(host.binding.services.map { Self.declaration(of: $0) }),
        ]
    }

    private func services(_ params: Value) throws(MethodError) -> Value {
        let name = try Self.string(params, "name", of: "services", optional: true)
        switch ServiceCatalog.documentation(of: host.binding.services, name: name) {
        case .success(let text):
            let entries = host.binding.services.filter { name == nil || $0.name == name }
            return ["text": .string(text), "services": .array(entries.map { Self.declaration(of: $0) })]
        case .failure(let error):
            throw .invalidParams("services: \(error.description)")
        }
    }

    /// A service's declaration as data: the shape process plugins declare theirs in.
    static func declaration(of entry: ServiceEntry) -> Value {
        let interface = entry.interface
        let properties: [Value] = interface.properties.map {
            ["name": .string($0.name), "type": .string($0.type), "doc": .string($0.summary)]
        }
        let methods: [Value] = interface.methods.map { method in
            let arguments: [Value] = method.arguments.map {
                ["name": .string($0.name), "type": .string($0.type.shortName + ($0.isOptional ? "?" : "")), "doc": .string($0.summary)]
            }
            return ["name": .string(method.name), "args": .array(arguments), "returns": method.result.map { .string($0) } ?? .null,
                    "doc": .string(method.summary)]
        }
        let events: [Value] = interface.events.map {
            ["name": .string($0.name), "payload": .string($0.payload), "doc": .string($0.summary)]
        }
        return ["name": .string(entry.name), "summary": .string(interface.summary), "properties": .array(properties),
                "methods": .array(methods), "events": .array(events)]
    }

    /// What `subscriptions()` lists: owner, target, creation site, deliveries, errors.
    private func subscriptionList() -> Value {
        .array(host.binding.registry.subscriptions.map {
            ["owner": .string($0.ownerName), "target": .string($0.targetDescription), "site": .string($0.site),
             "deliveries": .integer(Int64($0.deliveries)), "errors": .integer(Int64($0.errors))]
        })
    }

    // MARK: complete and send

    /// The longest line `complete` takes (a line of code typed at a prompt is far shorter).
    static let maxCompletedLine = 65536

    private func complete(_ params: Value) throws(MethodError) -> Value {
        let line = try Self.string(params, "line", of: "complete") ?? ""
        guard line.utf8.count <= Self.maxCompletedLine else {
            throw .invalidParams("complete: line must be at most \(Self.maxCompletedLine) bytes, got \(line.utf8.count); send the part before the cursor")
        }
        let characters = Array(line)
        var cursor = characters.count
        if let given = params["cursor"].integerValue {
            guard given >= 0 && given <= characters.count else {
                throw .invalidParams("complete: cursor must be in 0...\(characters.count) (characters), got \(given)")
            }
            cursor = Int(given)
        }
        let answer = LuaCompletion(host: host).complete(String(characters[..<cursor]))
        return ["items": .array(answer.candidates.map { .string($0) }), "from": .integer(Int64(cursor - answer.fragmentLength))]
    }

    /// `app.send(command, args...)`: the top controller's command, answered `{ sent }` once it
    /// has run, or error 1 when it went nowhere (no controller, an unknown command) or raised.
    /// While the command holds the loop, the client's `interrupt` (or its hanging up) stops it,
    /// as it does an eval.
    private func send(_ params: Value, _ session: RemoteSession,
                      _ reply: @escaping (Result<Value, MethodError>) -> Void) throws(MethodError) {
        guard let command = try Self.string(params, "command", of: "send"), !command.isEmpty else {
            throw .invalidParams("send: command must be a non-empty string")
        }
        let arguments: [Value]
        switch params["args"] {
        case .null: arguments = []
        case .array(let items): arguments = items
        default: throw .invalidParams("send: args must be an array, got \(params["args"].jsonKind)")
        }
        try callControllerHook("sendCommand", of: "send", [.string(command)] + arguments, session, reply)
    }

    /// The most keys one `key` request may press: they run one after another on the host's
    /// loop, so a bound keeps one request from holding it (and the person's own keys) for long.
    /// More are sent in several requests (`crescent send --key` refuses more before it connects).
    public static let maxKeysPerRequest = 10_000

    /// `key { keys = [ "down", "enter" ] }`: the keys pressed on the top controller as on its
    /// terminal, answered `{ pressed = n }` once the last has been handled, or error 1 when a
    /// name is no key (the message lists the names) or a key's method raised. At most
    /// ``maxKeysPerRequest`` keys.
    private func key(_ params: Value, _ session: RemoteSession,
                     _ reply: @escaping (Result<Value, MethodError>) -> Void) throws(MethodError) {
        guard case .array(let keys) = params["keys"], !keys.isEmpty, keys.allSatisfy({ $0.stringValue != nil }) else {
            throw .invalidParams("key: keys must be a non-empty array of key names, e.g. [\"down\", \"enter\"]")
        }
        guard keys.count <= Self.maxKeysPerRequest else {
            throw .invalidParams("key: at most \(Self.maxKeysPerRequest) keys per request, got \(keys.count); send them in several requests")
        }
        try callControllerHook("pressKeys", of: "key", keys, session) { result in
            reply(result.map { _ in ["pressed": .integer(Int64(keys.count))] })
        }
    }

    /// Calls the controller prelude's `hook(report, token, arguments...)`; `reply` hears the
    /// report (`{ sent = true }` or error 1 with the first line of the message), or the error
    /// the call raised at once.
    private func callControllerHook(_ hook: String, of method: String, _ arguments: [Value], _ session: RemoteSession,
                                    _ reply: @escaping (Result<Value, MethodError>) -> Void) throws(MethodError) {
        guard let hooks = host.loadedControllerHooks() else {
            throw MethodError(code: Self.failedCode, message: "\(method): this host runs no controllers")
        }
        let stack = host.vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        lastSendToken += 1
        let token = lastSendToken
        pendingSends[token] = { result in
            reply(result.mapError { error in
                guard method != "send", error.message.hasPrefix("send: ") else { return error }
                return MethodError(code: error.code, message: method + ": " + error.message.dropFirst(6), data: error.data)
            })
        }
        hooks.push(onto: stack)
        _ = stack.rawGet(-1, hook)
        pushSendReport()
        stack.push(Int64(token))
        for argument in arguments { host.binding.push(argument, onto: stack) }
        let connection = session.connection
        connection.codeRunning.store(true, ordering: .relaxed)
        host.remoteCaller = "remote client \(connection.id)"
        host.remoteNotice = Self.notice(to: connection)
        // An interrupt read while this request waited its turn on the host loop.
        if connection.interruptRequested.load(ordering: .relaxed) { host.vm.interrupter.interruptRunningCode() }
        do throws(LuaError) {
            try host.vm.call(arguments: Int32(arguments.count + 2), results: 0)
            connection.codeRunning.store(false, ordering: .relaxed)
            host.remoteCaller = nil
            host.remoteNotice = nil
        } catch {
            connection.codeRunning.store(false, ordering: .relaxed)
            host.remoteCaller = nil
            host.remoteNotice = nil
            let exiting = host.handleControlFlow(error)
            guard let answer = pendingSends.removeValue(forKey: token) else { return }
            // A bad argument (an unknown key name): its message alone, the host's frames in data.
            answer(exiting ? .success(["sent": true]) : .failure(Self.sendFailure(error.message)))
        }
        // The command's task was stopped by the interrupt before it could report.
        if connection.interruptRequested.load(ordering: .relaxed) {
            host.clearStrayInterrupt()
            host.finishRemoteStop(by: "remote client \(connection.id)")
            if let answer = pendingSends.removeValue(forKey: token) {
                answer(.failure(MethodError(code: Self.failedCode, message: "\(method): interrupted (the \(method == "send" ? "command" : "keys") '\(arguments.first?.stringValue ?? "")' stopped)",
                                            data: ["kind": "interrupted"])))
            }
        }
    }

    /// Error 1 for a command or keys that failed: the message's first line (the traceback, with
    /// the host's own frames, goes in `data.traceback`, not in what a CLI prints). `shown`: the
    /// host's output has said it already (`data.shown`), so a client streaming that output, as
    /// `crescent attach` does, need not say it twice.
    private static func sendFailure(_ message: String, shown: Bool = false) -> MethodError {
        let firstLine = message.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? message
        // Folded as every traceback is: the host's frames (`[crescent controllers]:841`) in one line.
        let traceback = Value.string(TracebackFolding.folded(message, always: true))
        let data: Value = shown ? ["traceback": traceback, "shown": true] : ["traceback": traceback]
        return MethodError(code: failedCode, message: "send: \(firstLine)", data: data)
    }

    /// Pushes the function the controller prelude calls with a sent command's outcome:
    /// `(token, ok, message)`.
    private func pushSendReport() {
        if let sendReport { return sendReport.push(onto: host.vm.stack) }
        // Weak: the function lives as long as the VM, which may outlive the server.
        host.vm.pushFunction { [weak self] stack in
            guard let self, let token = stack.integer(at: 1), let answer = self.pendingSends.removeValue(forKey: Int(token)) else {
                return .none
            }
            if stack.boolean(at: 2) { answer(.success(["sent": true])); return .none }
            answer(.failure(Self.sendFailure(stack.text(at: 3) ?? "the command failed", shown: stack.boolean(at: 4))))
            return .none
        }
        host.vm.stack.pushValue(at: -1)
        sendReport = host.vm.ref()
    }

    // MARK: Parameters

    /// The string parameter `key`; nil when absent and `optional`.
    static func string(_ params: Value, _ key: String, of method: String, optional: Bool = false) throws(MethodError) -> String? {
        switch params[key] {
        case .string(let text): return text
        case .null:
            if optional { return nil }
            throw .invalidParams("\(method): missing \"\(key)\" (a string)")
        default: throw .invalidParams("\(method): \"\(key)\" must be a string, got \(params[key].jsonKind)")
        }
    }

    /// The boolean parameter `key`, else `default`.
    static func flag(_ params: Value, _ key: String, of method: String, default: Bool) throws(MethodError) -> Bool {
        switch params[key] {
        case .bool(let flag): return flag
        case .null: return `default`
        default: throw .invalidParams("\(method): \"\(key)\" must be a boolean, got \(params[key].jsonKind)")
        }
    }
}

extension Value {
    var isObject: Bool {
        if case .object = self { return true }
        return false
    }

    /// The JSON type of a value a client sent, as the messages refusing it say it: `null`, `a
    /// boolean`, `a number`, `a string`, `an array`, `an object` (``typeName`` is Lua's word:
    /// `nil`, `table`, which a JSON client never wrote).
    var jsonKind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string, .bytes: "a string"
        case .array, .packed: "an array"
        case .object: "an object"
        case .model, .handle: "a " + typeName
        }
    }
}
