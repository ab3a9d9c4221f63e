import Model
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

extension ProcessPlugin {
    // MARK: The pipes

    /// Hands `run`'s stdout and stdin, and its stderr, to the loop; `readFirst`, bytes of stdout
    /// already read while the loop was held, are decoded before what the pipe brings.
    func connect(_ run: ProcessRun, readFirst: [UInt8] = []) {
        let plugin = NIOLoopBound(self, eventLoop: host.loop)
        let boundRun = NIOLoopBound(run, eventLoop: host.loop)
        let process = run.process
        NIOPipeBootstrap(group: host.loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if !readFirst.isEmpty { try channel.pipeline.syncOperations.addHandler(ReadFirstHandler(readFirst)) }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(JSONRPCLineDecoder()))
                    try channel.pipeline.syncOperations.addHandler(ProcessPluginHandler(plugin: plugin, run: boundRun))
                }
            }
            .takingOwnershipOfDescriptors(input: process.stdout, output: process.stdin)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    boundRun.value.attach(channel)
                case .failure(let error):
                    // Not closed here: the bootstrap runs on this loop, where a failure comes from
                    // setting the channel up, and NIO closes the descriptors it took then; closing
                    // them again could close whatever another thread opened under those numbers.
                    plugin.value.ended(boundRun.value, reason: "could not be read (\(error))")
                }
            }
        NIOPipeBootstrap(group: host.loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LogLineDecoder()))
                    try channel.pipeline.syncOperations.addHandler(ProcessPluginLogHandler(plugin: plugin))
                }
            }
            .takingOwnershipOfDescriptor(input: process.stderr)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    if boundRun.value.isClosed { channel.close(promise: nil) } else { boundRun.value.errors = channel }
                case .failure:
                    break  // NIO closed the descriptor (see above); the run goes on without its log.
                }
            }
    }

    // MARK: Messages from the program

    /// One line from the program's stdout.
    func received(_ line: [UInt8]) {
        if initializing {
            if !takenBeforeAnswer(line) { initialized(line) }
            return
        }
        switch JSONRPCMessage.parse(line: line) {
        case .failure(let error):
            skipMalformed(line, error.message)
        case .success(.response(let id, let result)):
            guard case .integer(let number) = id, let call = inFlight.removeValue(forKey: number) else { return }
            answeredInThisRun = true
            call.answer(.success(result))
        case .success(.failure(let id, let error)):
            guard case .integer(let number)? = id, let call = inFlight.removeValue(forKey: number) else {
                log(.warn, "reported an error: \(error.message)")
                return
            }
            answeredInThisRun = true
            let written = error.data?["code"].stringValue
            let code = written.flatMap(ServiceError.Code.init(name:))
            if let written, code == nil {
                // S5: a misspelled code became `internal` without a word (a Lua plugin's
                // service_error refuses one, listing the codes).
                let names = ServiceError.Code.all.map(\.name)
                let listing = NameSuggestion.listing("codes", names, suggesting: NameSuggestion.closest(to: written, among: names))
                log(.warn, "answered \(call.service):\(call.method) with error code '\(written)', which is no code (\(listing)); the caller gets internal")
            }
            call.answer(.failure(ServiceError(code ?? .internal, error.message)))
        case .success(.notification(let method, let params)):
            notified(method, params)
        case .success(.request(_, let method, _)):
            log(.warn, "sent a request ('\(method)'), which the host does not take; skipped")
        }
    }

    /// A line that comes before the answer to `initialize`: a notification is taken (a `set` or
    /// `emit` only once the services are made, else ignored) and a malformed line is logged and
    /// skipped. False for any other message: it must be the answer.
    func takenBeforeAnswer(_ line: [UInt8]) -> Bool {
        switch JSONRPCMessage.parse(line: line) {
        case .failure(let error):
            skipMalformed(line, error.message)
            return true
        case .success(.notification(let method, let params)):
            if !(services.isEmpty && (method == "set" || method == "emit")) { notified(method, params) }
            return true
        case .success:
            return false
        }
    }

    private func skipMalformed(_ line: [UInt8], _ problem: String) {
        log(.warn, "skipped a malformed line (\(problem)): \(String(decoding: line.prefix(200), as: UTF8.self))")
    }

    /// Why `arguments` cannot go to the program, naming the argument: JSON has no NaN or
    /// infinity, and a number dropped on the way would change the call.
    static func nonFinite(_ arguments: Arguments, of method: ServiceDeclaration.Method?) -> String? {
        for (index, value) in arguments.values.enumerated() {
            let name = method.flatMap { index < $0.arguments.count ? $0.arguments[index].name : nil } ?? "argument \(index + 1)"
            if let path = nonFinitePath(value, at: name) {
                return "\(path) is NaN or infinite, which JSON cannot carry to a process plugin; pass a finite number or nil"
            }
        }
        return nil
    }

    private static func nonFinitePath(_ value: Value, at path: String) -> String? {
        switch value {
        case .number(let number): return number.isFinite ? nil : path
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = nonFinitePath(item, at: "\(path)[\(index + 1)]") { return found }
            }
            return nil
        case .object(let fields):
            for (key, item) in fields {
                if let found = nonFinitePath(item, at: "\(path).\(key)") { return found }
            }
            return nil
        default: return nil
        }
    }

    /// ` (properties: count, total; did you mean 'count'?)` after a `set` or `emit` of a name
    /// the plugin does not declare, as a Lua plugin's is told: the service's names, or the
    /// plugin's services when the service is not one of them.
    private func undeclaredHint(_ service: String, _ name: String, kind: String,
                                names: (PluginService) -> [String]) -> String {
        guard let target = services[service] else {
            let declared = services.keys.sorted()
            return " (\(NameSuggestion.listing("services", declared, suggesting: NameSuggestion.closest(to: service, among: declared))))"
        }
        let declared = names(target)
        return " (\(NameSuggestion.listing(kind, declared, suggesting: NameSuggestion.closest(to: name, among: declared))))"
    }

    private func notified(_ method: String, _ params: Value) {
        switch method {
        case "set":
            let service = params["service"].stringValue ?? "", key = params["property"].stringValue ?? ""
            let value = params["value"]
            guard let target = services[service], let property = target.interface.property(key) else {
                log(.warn, "set '\(service).\(key)', which it does not declare; dropped" + undeclaredHint(service, key, kind: "properties") {
                    $0.interface.properties.map(\.name)
                })
                return
            }
            guard ServiceDeclaration.value(value, fitsProperty: property.type) else {
                log(.warn, PluginService.wrongType(set: "\(service).\(key)", to: value, declared: property.type))
                return
            }
            target.set(key, to: value)
        case "emit":
            let service = params["service"].stringValue ?? "", event = params["event"].stringValue ?? ""
            let payload = params["payload"]
            guard let target = services[service], let spec = target.interface.event(event) else {
                log(.warn, "emitted '\(service).\(event)', which it does not declare; dropped" + undeclaredHint(service, event, kind: "events") {
                    $0.interface.events.map(\.name)
                })
                return
            }
            let checked = PluginService.checkEmit("\(service).\(event)", payload: payload, declared: spec.payload)
            if let warning = checked.warning { log(.warn, warning) }
            if let delivered = checked.payload { target.emit(event, delivered) }
        case "log":
            let level = params["level"].stringValue.flatMap(HostOptions.LogLevel.init(name:)) ?? .info
            log(level, params["message"].stringValue ?? params["message"].jsonText)
        default:
            log(.warn, "sent a notification '\(method)', which the host does not take; skipped")
        }
    }

    // MARK: Calls

    /// Sends `service.method(arguments)` to the program (starting it again first when it is not
    /// running) and answers `reply` once.
    func call(_ service: String, _ method: String, _ arguments: Arguments, _ reply: Reply) {
        guard !isFinished else {
            reply(.failure(ServiceError(.unavailable, "plugin '\(manifest.name)' has stopped")))
            return
        }
        let call = PluginCall(plugin: manifest.name, service: service, method: method,
                              result: PluginCall.result(of: method, service: service, in: knownDeclarations), arguments: arguments, reply: reply)
        deadlines.add(call)
        call.onDone = { [weak self] call in self?.deadlines.remove(call) }
        call.onCancel(on: host.loop) { [self] call in
            drop(call, answering: ServiceError(.cancelled, "the request was cancelled"))
        }
        if running != nil {
            if initializing { waiting.append(call) } else { send(call) }
        } else {
            waiting.append(call)
            scheduleRestart()
        }
    }

    /// Ends `call` with `error`, telling the program to stop working on it.
    func drop(_ call: PluginCall, answering error: ServiceError) {
        guard !call.isDone else { return }
        waiting.removeAll { $0 === call }
        if let id = call.requestID, inFlight.removeValue(forKey: id) != nil {
            running?.send(JSONRPCMessage.notification(method: "cancel", params: ["id": .integer(id)]).line)
        }
        call.answer(.failure(error))
    }

    func send(_ call: PluginCall) {
        guard let running else { return }
        let id = nextID
        nextID += 1
        call.requestID = id
        inFlight[id] = call
        let params: Value = ["service": .string(call.service), "method": .string(call.method), "args": .array(call.arguments.values)]
        running.send(JSONRPCMessage.request(id: .integer(id), method: "call", params: params).line)
    }

    /// Starts the program again for the waiting calls, once the backoff has passed.
    private func scheduleRestart() {
        guard restartJob == nil else { return }
        let delay = restartAt.map { $0 - host.clock.uptime } ?? .zero
        let plugin = NIOLoopBound(self, eventLoop: host.loop)
        restartJob = host.clock.schedule(after: max(delay, .zero)) {
            onLoop(plugin) { plugin in
                plugin.restartJob = nil
                plugin.restart()
            }
        }
    }

    /// Starts the program again for the waiting calls, which go out once it has answered
    /// `initialize` (the loop runs on meanwhile).
    private func restart() {
        guard !isFinished, running == nil, !waiting.isEmpty else { return }
        do throws(PluginProblem) {
            try checkGrantBeforeRestart()
            try launchInBackground()
        } catch {
            log(.error, "could not start again: \(error.message)")
            restartAt = host.clock.uptime + backoff.advance()
            let calls = waiting
            waiting.removeAll()
            for call in calls { call.answer(.failure(ServiceError(.unavailable, "plugin '\(manifest.name)' could not start again: \(error.message)"))) }
        }
    }
}

extension ProcessPlugin {
    /// Refuses a restart when the plugin's files changed since it started to a manifest that
    /// asks for more than its grant holds, as a start would refuse it: the program on disk is
    /// the new one, and it ran without its grant (confined to the old one, but its code ran;
    /// attack new27g D5). A manifest that no longer loads refuses too (its program may be
    /// anything now); a folder gone is left to the start, which names it.
    func checkGrantBeforeRestart() throws(PluginProblem) {
        guard access(manifest.folder, F_OK) == 0 else { return }
        let current: PluginManifest
        do throws(PluginProblem) {
            current = try PluginManifest.load(folder: manifest.folder, hostVersion: CrescentVersion.current)
        } catch {
            throw PluginProblem("its manifest changed since it started and no longer loads (\(error.message)); run it again once it is fixed")
        }
        guard current.permissions != manifest.permissions || current.version != manifest.version else { return }
        if case .notGranted(let missing, _) = PluginGrants(dataDirectory: host.options.dataDirectory).status(of: current) {
            throw PluginProblem("its files changed since it started to \(current.version), which asks for more than was granted ("
                + PluginCatalog.terminalSafe(missing.joined(separator: ", ")) + "): run `crescent plugins allow \(manifest.name)` to review and grant it, then run again")
        }
    }
}

/// Reads the program's stdout: one JSON-RPC message per line.
private final class ProcessPluginHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let plugin: NIOLoopBound<ProcessPlugin>
    let run: NIOLoopBound<ProcessRun>

    init(plugin: NIOLoopBound<ProcessPlugin>, run: NIOLoopBound<ProcessRun>) {
        self.plugin = plugin
        self.run = run
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard plugin.value.running === run.value else { return }
        plugin.value.received(Array(buffer.readableBytesView))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is JSONRPCLineTooLong {
            plugin.value.log(.error, "sent a line longer than \(JSONRPCLineDecoder.defaultMaximumLength) bytes; ending it")
            kill(run.value.process.pid, SIGKILL)
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        plugin.value.ended(run.value, reason: "exited")
    }
}

/// Reads the program's stderr: each line goes to the log at `warn`, named after the plugin; a
/// line past the decoder's bound goes cut, with a mark saying so.
private final class ProcessPluginLogHandler: ChannelInboundHandler {
    typealias InboundIn = LogLine

    let plugin: NIOLoopBound<ProcessPlugin>

    init(plugin: NIOLoopBound<ProcessPlugin>) { self.plugin = plugin }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        let text = String(decoding: line.text.readableBytesView, as: UTF8.self)
        if PluginMemoryShortage.saysOutOfMemory(text) { plugin.value.saidOutOfMemory = true }
        plugin.value.log(.warn, line.isCut ? text + " [cut: the line is longer than \(line.text.readableBytes) bytes]" : text)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
