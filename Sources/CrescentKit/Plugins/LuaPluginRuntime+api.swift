import CLua
import LuaBridge
import Model

/// The globals a Lua plugin declares its services with: `service(name, summary)` and its
/// `property`, `method`, `event`, `set` and `emit`, `service_error(code, message)`, `settings`.
///
/// The friendly part is Lua (the prelude's plugin.lua, as mpv writes its API in Lua over a few
/// native primitives); the primitives record declarations, carry `set`/`emit` values to the
/// service the script sees and read its properties back (`places.near` inside the plugin).
extension LuaPluginRuntime {
    /// Installs the plugin globals and `settings` (the plugin's section, defaults applied).
    func installAPI(settings: Value) throws(LuaError) {
        let vm = host.vm
        try Prelude.plugin.load(into: vm)
        let stack = vm.stack
        stack.newTable(fieldCount: 8)
        vm.register(field: "declare") { [unowned self] stack in
            try self.declare(try stack.checkString(1, function: "service"), summary: stack.text(at: 2) ?? "")
            return .none
        }
        vm.register(field: "property") { [unowned self] stack in
            let value = try self.crossing(at: 5, in: stack, what: "the initial value of property '\(stack.text(at: 2) ?? "")'")
            if let problem = ServiceDeclaration.initialProblem(value, property: stack.text(at: 2) ?? "", type: stack.text(at: 3) ?? "") {
                throw LuaRaise("\(stack.text(at: 1) ?? ""):property: \(problem)")
            }
            try self.change(stack.text(at: 1) ?? "") { declaration in
                if let problem = declaration.memberProblem(stack.text(at: 2) ?? "", .property) { throw LuaRaise(problem) }
                declaration.properties.append(.init(name: stack.text(at: 2) ?? "", type: stack.text(at: 3) ?? "",
                                                    doc: stack.text(at: 4) ?? "", value: value))
            }
            return .none
        }
        vm.register(field: "method") { [unowned self] stack in
            // service name args returns doc
            var arguments: [ArgumentSpec] = []
            for position in 0..<Int64(stack.rawLength(3)) {
                _ = stack.rawGet(3, index: position + 1)
                defer { stack.pop() }
                guard let text = stack.text(at: -1), let argument = ServiceDeclaration.argument(text) else {
                    throw LuaRaise("bad argument #2 to 'method' (argument #\(position + 1) must be a string like \"name: string\")")
                }
                if let problem = ServiceDeclaration.typeProblem(String(text.drop { $0 != ":" }.dropFirst())) {
                    throw LuaRaise("bad argument #2 to 'method' (argument #\(position + 1) '\(argument.name)': \(problem))")
                }
                arguments.append(argument)
            }
            // The return type is checked as an argument's is: a misspelled word was taken as a
            // table's name, so every call failed asking the plugin to "return a strin".
            if let problem = ServiceDeclaration.typeProblem(stack.text(at: 4) ?? "nil") {
                throw LuaRaise("bad argument #3 to 'method' (its return type: \(problem))")
            }
            // `main.lua:4`, which a wrong answer of the method names.
            var place = stack.innermostFilePlace(levels: 8) ?? ""
            if place.hasSuffix(": ") { place.removeLast(2) }
            try self.change(stack.text(at: 1) ?? "") { declaration in
                if let problem = declaration.memberProblem(stack.text(at: 2) ?? "", .method) { throw LuaRaise(problem) }
                declaration.methods.append(.init(name: stack.text(at: 2) ?? "", arguments: arguments,
                                                 returns: stack.text(at: 4) ?? "nil", doc: stack.text(at: 5) ?? "",
                                                 declaredAt: place))
            }
            return .none
        }
        vm.register(field: "event") { [unowned self] stack in
            try self.change(stack.text(at: 1) ?? "") { declaration in
                if let problem = declaration.memberProblem(stack.text(at: 2) ?? "", .event) { throw LuaRaise(problem) }
                declaration.events.append(EventSpec(name: stack.text(at: 2) ?? "", payload: stack.text(at: 3) ?? "nil",
                                                    summary: stack.text(at: 4) ?? ""))
            }
            return .none
        }
        vm.register(field: "get") { [unowned self] stack in
            // service key
            guard let value = self.value(service: stack.text(at: 1) ?? "", key: stack.text(at: 2) ?? "") else { return .none }
            self.host.binding.push(value, onto: stack)
            return .one
        }
        vm.register(field: "no_member") { [unowned self] stack in
            // service key
            guard let message = self.undeclaredMember(service: stack.text(at: 1) ?? "", key: stack.text(at: 2) ?? "") else { return .none }
            stack.push(message)
            return .one
        }
        vm.register(field: "set") { [unowned self] stack in
            try self.set(service: stack.text(at: 1) ?? "", key: try stack.checkString(2, function: "set"), value: 3, in: stack)
            return .none
        }
        vm.register(field: "emit") { [unowned self] stack in
            try self.emit(service: stack.text(at: 1) ?? "", event: try stack.checkString(2, function: "emit"), payload: 3, in: stack)
            return .none
        }
        vm.register(field: "no_setting") { [unowned self] stack in
            guard let message = self.undeclaredSetting(stack.text(at: 1) ?? "?") else { return .none }
            stack.push(message)
            return .one
        }
        stack.newTable(fieldCount: Int32(ServiceError.Code.all.count))
        for code in ServiceError.Code.all {
            stack.push(true)
            stack.rawSet(-2, code.name)
        }
        stack.push(manifest.name)
        pushPolicy(onto: stack)
        host.binding.push(settings, onto: stack)
        try vm.call(arguments: 5, results: 2)
        classify = vm.ref()
        invoke = vm.ref()
    }

    /// The error of reading `settings.KEY` for a key the manifest does not declare (nil for a
    /// declared one, which reads nil when it has no value): such a read was a silent nil, so a
    /// misspelled `settings.greting` looked like a setting left empty.
    func undeclaredSetting(_ key: String) -> String? {
        let names = manifest.settings.map(\.key)
        guard !names.contains(key) else { return nil }
        let listing = NameSuggestion.listing("settings", names, suggesting: NameSuggestion.closest(to: key, among: names))
        return "settings.\(key): plugin '\(manifest.name)' declares no setting '\(key)' (\(listing)); "
            + "a setting is declared as [settings.\(key)] in \(manifest.path)"
    }

    /// The methods of a Lua plugin's service object (`service(...)` in its main.lua).
    static let serviceObjectMethods = ["property", "method", "event", "set", "emit"]

    /// What a plugin's own service object says when it is read at `key`, which is neither one of
    /// its methods nor a property the service declares: `no method or property 'mehtod' on
    /// service greet (properties: …; methods: …; did you mean 'method'?)`. Nil for a property
    /// (then a nil value is the property's).
    func undeclaredMember(service: String, key: String) -> String? {
        let properties = services[service].map { $0.interface.properties.map(\.name) }
            ?? declarations.first { $0.name == service }?.properties.map(\.name) ?? []
        guard !properties.contains(key) else { return nil }
        let closest = NameSuggestion.closest(to: key, among: Self.serviceObjectMethods + properties)
        return "no method or property '\(key)' on service \(service) (\(NameSuggestion.listing("properties", properties, suggesting: nil)); "
            + "\(NameSuggestion.listing("methods", Self.serviceObjectMethods, suggesting: closest)))"
    }

    /// The value at `index` as a model value; a part that cannot cross raises, naming the path.
    func crossing(at index: Int32, in stack: LuaStack, what: String) throws -> Value {
        host.binding.refusesMetatables = true
        defer { host.binding.refusesMetatables = false }
        do throws(ConversionFailure) {
            return try host.binding.value(at: index, in: stack)
        } catch {
            throw LuaRaise("\(what) cannot cross to the script: \(error.description) (values cross as data: no functions, no metatables)")
        }
    }

    private func declare(_ name: String, summary: String) throws {
        guard services.isEmpty else { throw LuaRaise("service('\(name)'): declare services while main runs, not later") }
        guard PluginNames.isValid(name) else { throw LuaRaise("service('\(name)'): a service name must match \(PluginNames.rule)") }
        guard !declarations.contains(where: { $0.name == name }) else { throw LuaRaise("service('\(name)') is declared twice") }
        declarations.append(ServiceDeclaration(name: name, summary: summary))
    }

    private func change(_ service: String, _ body: (inout ServiceDeclaration) throws -> Void) throws {
        guard services.isEmpty else { throw LuaRaise("\(service): declare properties, methods and events while main runs, not later") }
        guard let index = declarations.firstIndex(where: { $0.name == service }) else { throw LuaRaise("no service '\(service)' declared") }
        try body(&declarations[index])
    }

    /// The current value of `service`'s property `key` (nil when it declares no such property):
    /// the service's once `main` has returned, the declared value before.
    private func value(service: String, key: String) -> Value? {
        if let made = services[service] {
            guard made.interface.property(key) != nil else { return nil }
            return made.value(of: key)
        }
        return declarations.first { $0.name == service }?.properties.first { $0.name == key }?.value
    }

    /// Sets a property; a value whose type is not the declared one raises at the plugin's line,
    /// as an `emit` of an undeclared event does (it was a warning and `set` went on as if done:
    /// the plugin's own mistake, made in its own code, which is where an error can be fixed). A
    /// process plugin's `set` is a notification nothing can raise in: its stays a warning.
    private func set(service: String, key: String, value index: Int32, in stack: LuaStack) throws {
        let value = try crossing(at: index, in: stack, what: "\(service):set('\(key)', ...): the value")
        let names = declarations.first { $0.name == service }?.properties.map(\.name) ?? []
        let listing = NameSuggestion.listing("properties", names, suggesting: NameSuggestion.closest(to: key, among: names))
        let undeclared = LuaRaise("\(service):set('\(key)', ...): no property '\(key)' is declared (\(listing)); "
            + "declare it with \(service):property(\"\(key)\", type, doc, initial)")
        if let made = services[service] {
            guard let property = made.interface.property(key) else { throw undeclared }
            guard ServiceDeclaration.value(value, fitsProperty: property.type) else {
                throw Self.wrongType(service: service, key: key, value: value, declared: property.type)
            }
            made.set(key, to: value)
            return
        }
        try change(service) { declaration in
            guard let position = declaration.properties.firstIndex(where: { $0.name == key }) else { throw undeclared }
            let type = declaration.properties[position].type
            guard ServiceDeclaration.value(value, fitsProperty: type) else {
                throw Self.wrongType(service: service, key: key, value: value, declared: type)
            }
            declaration.properties[position].value = value
        }
    }

    /// The error of a `set` of `value` to property `key`, whose declared type is `declared`.
    private static func wrongType(service: String, key: String, value: Value, declared: String) -> LuaRaise {
        let shown = switch value {
        case .null: "nil"
        case .bool, .integer, .number, .string: "\(ArgumentType.article(value.typeName)) \(value.typeName) \(value.jsonText.prefix(40))"
        default: "\(ArgumentType.article(value.typeName)) \(value.typeName)"
        }
        return LuaRaise("\(service):set('\(key)', ...): the value is \(shown), which is not the type of property "
            + "'\(key)' (\(declared)); the property keeps its value: set one of its type, or declare it with another type")
    }

    /// Emits an event; a payload whose type is not the declared one is dropped with a warning, a
    /// field its `{ a, b }` payload does not list is left out with one.
    private func emit(service: String, event: String, payload index: Int32, in stack: LuaStack) throws {
        let payload = try crossing(at: index, in: stack, what: "\(service):emit('\(event)', ...): the payload")
        guard let made = services[service] else {
            throw LuaRaise("\(service):emit('\(event)', ...): events can be emitted once main has returned")
        }
        guard let spec = made.interface.event(event) else {
            let names = made.interface.events.map(\.name)
            let listing = NameSuggestion.listing("events", names, suggesting: NameSuggestion.closest(to: event, among: names))
            throw LuaRaise("\(service):emit('\(event)', ...): no event '\(event)' is declared (\(listing))")
        }
        let checked = PluginService.checkEmit("\(service).\(event)", payload: payload, declared: spec.payload)
        if let warning = checked.warning {
            // At the plugin's line (`main.lua:12: `), as its other mistakes are named.
            warn((stack.innermostFilePlace(levels: 8) ?? "") + warning)
        }
        if let delivered = checked.payload { made.emit(event, delivered) }
    }

    /// A warning in the run's log, named after the plugin.
    private func warn(_ message: String) {
        (host.parent ?? host).log(.warn, plugin: manifest.name, message)
    }
}
