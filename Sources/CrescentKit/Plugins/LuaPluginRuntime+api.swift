import CLua
import LuaBridge
import Model

/// The globals a Lua plugin declares its services with: `service(name, summary)` and its
/// `property`, `method`, `event`, `set` and `emit`, `service_error(code, message)`, `settings`.
///
/// The friendly part is Lua (the chunk below, as mpv writes its API in Lua over a few native
/// primitives); the primitives record declarations and carry `set`/`emit` values to the service
/// the script sees.
extension LuaPluginRuntime {
    private static let apiSource = """
        local native, codes = ...
        local methods = {}
        local Service = { __name = "PluginService" }
        Service.__index = Service
        local function check(value, kind, position, name)
          if type(value) ~= kind then
            error(("bad argument #%d to '%s' (%s expected, got %s)"):format(position, name, kind, type(value)), 3)
          end
        end
        function service(name, summary)
          check(name, "string", 1, "service")
          native.declare(name, summary == nil and "" or tostring(summary))
          methods[name] = {}
          return setmetatable({ name = name }, Service)
        end
        function Service:property(name, kind, doc, initial)
          check(name, "string", 1, "property")
          check(kind, "string", 2, "property")
          native.property(self.name, name, kind, doc == nil and "" or tostring(doc), initial)
        end
        function Service:method(name, args, returns, doc, fn)
          check(name, "string", 1, "method")
          check(args, "table", 2, "method")
          check(fn, "function", 5, "method")
          native.method(self.name, name, args, returns == nil and "nil" or tostring(returns), doc == nil and "" or tostring(doc))
          methods[self.name][name] = fn
        end
        function Service:event(name, payload, doc)
          check(name, "string", 1, "event")
          native.event(self.name, name, payload == nil and "nil" or tostring(payload), doc == nil and "" or tostring(doc))
        end
        function Service:set(key, value) return native.set(self.name, key, value) end
        function Service:emit(event, payload) return native.emit(self.name, event, payload) end
        local ServiceError = { __name = "ServiceError" }
        ServiceError.__tostring = function(e) return e.code .. ": " .. e.message end
        function service_error(code, message)
          if not codes[code] then
            local names = {}
            for name in pairs(codes) do names[#names + 1] = name end
            table.sort(names)
            error(("service_error: unknown code '%s' (codes: %s)"):format(tostring(code), table.concat(names, ", ")), 2)
          end
          return setmetatable({ code = code, message = message == nil and code or tostring(message) }, ServiceError)
        end
        local function invoke(service, method, ...)
          return methods[service][method](...)
        end
        -- The code and message of an error that is a service error (service_error's, or one a
        -- service call answered and the plugin raised again); nothing for any other error.
        local function classify(err)
          if type(err) == "table" and type(err.code) == "string" and codes[err.code] then
            return err.code, tostring(err.message)
          end
        end
        return invoke, classify
        """

    /// Installs the plugin globals and `settings` (the plugin's section, defaults applied).
    func installAPI(settings: Value) throws(LuaError) {
        let vm = host.vm
        try vm.load(Array(Self.apiSource.utf8), name: "=[crescent plugin]")
        let stack = vm.stack
        stack.newTable(fieldCount: 6)
        vm.register(field: "declare") { [unowned self] stack in
            try self.declare(try stack.checkString(1, function: "service"), summary: stack.text(at: 2) ?? "")
            return .none
        }
        vm.register(field: "property") { [unowned self] stack in
            let value = try self.crossing(at: 5, in: stack, what: "the initial value of property '\(stack.text(at: 2) ?? "")'")
            try self.change(stack.text(at: 1) ?? "") { declaration in
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
                arguments.append(argument)
            }
            try self.change(stack.text(at: 1) ?? "") { declaration in
                declaration.methods.append(.init(name: stack.text(at: 2) ?? "", arguments: arguments,
                                                 returns: stack.text(at: 4) ?? "nil", doc: stack.text(at: 5) ?? ""))
            }
            return .none
        }
        vm.register(field: "event") { [unowned self] stack in
            try self.change(stack.text(at: 1) ?? "") { declaration in
                declaration.events.append(EventSpec(name: stack.text(at: 2) ?? "", payload: stack.text(at: 3) ?? "nil",
                                                    summary: stack.text(at: 4) ?? ""))
            }
            return .none
        }
        vm.register(field: "set") { [unowned self] stack in
            try self.set(service: stack.text(at: 1) ?? "", key: try stack.checkString(2, function: "set"), value: 3, in: stack)
            return .none
        }
        vm.register(field: "emit") { [unowned self] stack in
            try self.emit(service: stack.text(at: 1) ?? "", event: try stack.checkString(2, function: "emit"), payload: 3, in: stack)
            return .none
        }
        stack.newTable(fieldCount: Int32(ServiceError.Code.all.count))
        for code in ServiceError.Code.all {
            stack.push(true)
            stack.rawSet(-2, code.name)
        }
        try vm.call(arguments: 2, results: 2)
        classify = vm.ref()
        invoke = vm.ref()
        host.binding.push(settings, onto: stack)
        vm.setGlobal("settings")
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
        guard PluginNames.isValid(name) else { throw LuaRaise("service('\(name)'): a service name must match [a-z][a-z0-9_]*") }
        guard !declarations.contains(where: { $0.name == name }) else { throw LuaRaise("service('\(name)') is declared twice") }
        declarations.append(ServiceDeclaration(name: name, summary: summary))
    }

    private func change(_ service: String, _ body: (inout ServiceDeclaration) throws -> Void) throws {
        guard services.isEmpty else { throw LuaRaise("\(service): declare properties, methods and events while main runs, not later") }
        guard let index = declarations.firstIndex(where: { $0.name == service }) else { throw LuaRaise("no service '\(service)' declared") }
        try body(&declarations[index])
    }

    private func set(service: String, key: String, value index: Int32, in stack: LuaStack) throws {
        let value = try crossing(at: index, in: stack, what: "\(service):set('\(key)', ...): the value")
        if let made = services[service] {
            guard made.set(key, to: value) else { throw LuaRaise("\(service):set('\(key)', ...): no property '\(key)' is declared") }
            return
        }
        try change(service) { declaration in
            guard let position = declaration.properties.firstIndex(where: { $0.name == key }) else {
                throw LuaRaise("\(service):set('\(key)', ...): no property '\(key)' is declared")
            }
            declaration.properties[position].value = value
        }
    }

    private func emit(service: String, event: String, payload index: Int32, in stack: LuaStack) throws {
        let payload = try crossing(at: index, in: stack, what: "\(service):emit('\(event)', ...): the payload")
        guard let made = services[service] else {
            throw LuaRaise("\(service):emit('\(event)', ...): events can be emitted once main has returned")
        }
        guard made.emit(event, payload) else { throw LuaRaise("\(service):emit('\(event)', ...): no event '\(event)' is declared") }
    }
}
