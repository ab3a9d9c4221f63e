import CLua
import LuaBridge
import Model
import Synchronization

extension RemoteServer {
    /// `observe { service, key, initial? }`: the client's subscription to a property, coalesced as
    /// a Lua observer's (one delivery per turn, last value wins). `service` is a service name, or
    /// a Lua expression giving an observable object (`services.store:collection("groceries")`).
    /// Notifications `changed { subscription, value, old }`; a slow reader gets the latest value.
    func observe(_ params: Value, _ session: RemoteSession) throws(MethodError) -> Value {
        guard let target = try Self.string(params, "service", of: "observe"),
              let key = try Self.string(params, "key", of: "observe") else { return .null }
        let initial = try Self.flag(params, "initial", of: "observe", default: true)
        let box = try object(named: target, for: session.connection)
        guard box.interface.property(key) != nil else {
            let names = box.interface.properties.map(\.name)
            let listing = NameSuggestion.listing("properties", names, suggesting: NameSuggestion.closest(to: key, among: names))
            throw .invalidParams("observe: '\(key)' is not a property of \(target) (\(listing))")
        }
        let connection = session.connection
        var number = 0
        let subscription = host.binding.registry.observe(
            box.handle, key: key, initial: initial, site: "remote client \(connection.id)", owner: session.scope,
            handler: .property { [unowned self] change in
                var params: Fields = ["subscription": .integer(Int64(number))]
                do throws(JSONRefusal) {
                    params["value"] = try self.json(change.new, root: "value")
                    params["old"] = try change.old.map { value throws(JSONRefusal) in try self.json(value, root: "old") } ?? .null
                } catch {
                    params = ["subscription": .integer(Int64(number)), "error": .string(error.message)]
                }
                connection.sendLatest(.notification(method: "changed", params: .object(params)), key: "changed \(number)")
            })
        number = session.add(subscription)
        return ["subscription": .integer(Int64(number))]
    }

    /// `on { event }`: the client's handler of a named notification (`location.didFail`, or
    /// any name a script posts). Notifications `event { subscription, name, payload }`, never
    /// dropped: a client that lets too many wait is disconnected. A service's prefix with an
    /// event it does not have is refused, as the script's `on` refuses it; a name of the script's
    /// own that looks like a service's event is answered with a `warning` beside the subscription.
    func on(_ params: Value, _ session: RemoteSession) throws(MethodError) -> Value {
        guard let event = try Self.string(params, "event", of: "on"), !event.isEmpty else {
            throw .invalidParams("on: event must be a non-empty string")
        }
        var warning: String?
        switch host.binding.eventNameCheck(event, host.vm.stack) {
        case .fine: break
        case .warning(let message): warning = message
        case .refused(let message): throw .invalidParams("on: \(message)")
        }
        let connection = session.connection
        var number = 0
        let subscription = host.binding.registry.on(
            event, site: "remote client \(connection.id)", owner: session.scope,
            handler: .event { [unowned self] delivery in
                var params: Fields = ["subscription": .integer(Int64(number)), "name": .string(delivery.name)]
                // A payload JSON cannot hold (NaN, text that is not UTF-8, a cycle, ...) reaches the
                // client as the event with `error` (json.encode's words) instead of `payload`: the
                // subscriber learns it happened and why, and the host goes on.
                switch self.json(delivery.payload) {
                case .success(let payload): params["payload"] = payload
                case .failure(let refusal): params["error"] = .string(refusal.message)
                }
                connection.send(.notification(method: "event", params: .object(params)))
            })
        number = session.add(subscription)
        guard let warning else { return ["subscription": .integer(Int64(number))] }
        return ["subscription": .integer(Int64(number)), "warning": .string(warning)]
    }

    /// `unsubscribe { subscription }`.
    func unsubscribe(_ params: Value, _ session: RemoteSession) throws(MethodError) -> Value {
        guard let number = params["subscription"].integerValue else {
            throw .invalidParams("unsubscribe: subscription must be the number observe or on answered")
        }
        guard session.cancel(Int(clamping: number)) else {
            throw .invalidParams("unsubscribe: this client has no subscription \(number)")
        }
        return ["unsubscribed": true]
    }

    /// The object `target` names: a service by name, else the value of a Lua expression, which
    /// `connection`'s `interrupt` (or its hanging up) stops as it would an eval.
    private func object(named target: String, for connection: RemoteConnection) throws(MethodError) -> ObjectBox {
        let stack = host.vm.stack
        let base = stack.top
        defer { stack.setTop(base) }
        if host.binding.services.contains(where: { $0.name == target }) {
            guard host.binding.pushService(named: target, onto: stack), let box = host.binding.anyObjectBox(at: -1, in: stack) else {
                throw MethodError(code: Self.failedCode, message: "observe: services.\(target) cannot start")
            }
            return box
        }
        do throws(LuaError) {
            try host.vm.load(Array(("return " + target).utf8), name: "=remote")
            connection.codeRunning.store(true, ordering: .relaxed)
            host.remoteCaller = "remote client \(connection.id)"
            defer {
                connection.codeRunning.store(false, ordering: .relaxed)
                host.remoteCaller = nil
            }
            // An interrupt read while this request waited its turn on the host loop.
            if connection.interruptRequested.load(ordering: .relaxed) { host.vm.interrupter.interruptRunningCode() }
            try host.vm.call(arguments: 0, results: 1)
        } catch {
            if error.kind == .interrupted {
                host.clearStrayInterrupt()
                throw MethodError(code: Self.failedCode, message: "observe: interrupted while computing '\(target)'",
                                  data: ["kind": "interrupted"])
            }
            let names = host.binding.services.map(\.name).joined(separator: ", ")
            throw .invalidParams("observe: '\(target)' is neither a service (\(names)) nor an expression giving an object: \(TracebackFolding.folded(error.message, always: true))")
        }
        guard let box = host.binding.anyObjectBox(at: -1, in: stack) else {
            // A service's name misspelled reads as a global that is nil: name the services.
            let services = host.binding.services.map(\.name)
            if stack.isNoneOrNil(-1), let closest = NameSuggestion.closest(to: target, among: services) {
                throw .invalidParams("observe: no service '\(target)' (" + NameSuggestion.listing("services", services, suggesting: closest)
                    + "), and as a Lua expression it gives nil")
            }
            throw .invalidParams("observe: '\(target)' gives a \(stack.typeName(at: -1)), not an observable object")
        }
        return box
    }

    /// A payload as the client reads it, under the one JSON rule (a Lua value posted by a script
    /// as `json.encode` would write it, `__tojson` included), or why it has none.
    private func json(_ payload: EventPayload) -> Result<Value, JSONRefusal> {
        switch payload {
        case .value(let value): return checked(value)
        case .opaque(let object):
            if let reported = object as? ReportedEvent { return checked(reported.payload) }
            guard let posted = object as? PostedPayload else { return .success(.null) }
            let stack = host.vm.stack
            posted.value.push(onto: stack)
            defer { stack.pop() }
            return host.binding.jsonForm(at: -1, in: stack, root: "payload")
        }
    }

    /// A payload made in Swift as the client reads it, or why JSON cannot hold it.
    private func checked(_ payload: Value) -> Result<Value, JSONRefusal> {
        do throws(JSONRefusal) { return .success(try json(payload, root: "payload")) } catch { return .failure(error) }
    }

    /// A value as the client sees it (object handles have no JSON form: their type name), or
    /// why JSON cannot hold it, naming the place from `root`.
    private func json(_ value: Value, root: String) throws(JSONRefusal) -> Value {
        if case .handle(let handle) = value { return .string("<\(handle.typeName)>") }
        if let failure = value.jsonFailure { throw JSONRefusal(failure.message(root: root)) }
        return value
    }

    // MARK: view

    /// `view { format, watch, width }`: the top controller's view now; with `watch`, a `render`
    /// notification each time it changes (a slow reader gets the latest).
    func view(_ params: Value, _ session: RemoteSession) throws(MethodError) -> Value {
        let format = try Self.string(params, "format", of: "view", optional: true) ?? "plain"
        let watch = try Self.flag(params, "watch", of: "view", default: false)
        let mode: RemoteSession.Watch
        switch format {
        case "plain":
            var width = host.presenter.width
            if let given = params["width"].integerValue {
                guard (1...10_000).contains(given) else { throw .invalidParams("view: width must be in 1...10000, got \(given)") }
                width = Int(given)
            }
            mode = .plain(width: width)
        case "json": mode = .json
        default: throw .invalidParams("view: format must be \"plain\" or \"json\", got \"\(format)\"")
        }
        let current = render(mode)
        session.watch = watch ? mode : .off
        session.lastRender = watch ? current.jsonText : nil
        return current
    }

    /// The top view in `mode`: `{ text }` or `{ controller, view }` (view nil without a controller).
    private func render(_ mode: RemoteSession.Watch) -> Value {
        let presenter = host.presenter
        switch mode {
        case .off, .plain:
            var width = 80
            if case .plain(let given) = mode { width = given }
            var lines = presenter.root?.lines(width: width) ?? []
            while lines.last?.isEmpty == true { lines.removeLast() }
            return ["text": .string(lines.joined(separator: "\n"))]
        case .json:
            guard let root = presenter.root else { return ["controller": .null, "view": .null] }
            let text: String
            do throws(JSONEncodingFailure) {
                text = try JSONText.node(root)
            } catch {
                return ["controller": .string(presenter.controllerName), "error": .string(error.message(root: "view"))]
            }
            // JSONText.node keeps within the depth the decoder allows, so this reads back; were it
            // ever not to, the client hears why rather than a view that is not there.
            do throws(ServiceError) {
                return ["controller": .string(presenter.controllerName), "view": try Value(jsonText: text)]
            } catch {
                return ["controller": .string(presenter.controllerName), "error": .string("view: \(error.message)")]
            }
        }
    }

    /// After each render pass: watchers get the new view when it changed for them.
    func rendered() {
        var cache: [String: (Value, String)] = [:]
        for session in sessions.values where session.watch != .off {
            let key = "\(session.watch)"
            let (value, text) = cache[key] ?? {
                let value = render(session.watch)
                return (value, value.jsonText)
            }()
            cache[key] = (value, text)
            guard text != session.lastRender else { continue }
            session.lastRender = text
            session.connection.sendLatest(.notification(method: "render", params: value), key: "render")
        }
    }
}
