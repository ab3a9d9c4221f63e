import CLua
import LuaBridge
import Model
import Services

extension ModelBinding {
    /// `help([x])` prints the documentation of a service, a method, a global or an overview.
    func installHelp() {
        vm.register("help") { [unowned self] stack in
            try ExtraArguments.check(stack, takes: 1, signature: "help([topic])", arity: "a topic (optional)")
            self.host.writeOutput(self.helpText(for: 1, in: stack) + "\n")
            return .none
        }
    }

    /// Documents the methods of a freshly built object type, so `help(obj.method)` works.
    func documentMethods(of type: LuaObjectType<ObjectBox>, interface: AnyInterface) {
        let stack = vm.stack
        type.pushMethods(onto: stack)                                // methods
        for method in interface.methods {
            guard stack.rawGet(-1, method.name) == .function else {
                stack.pop()
                continue
            }
            document(functionOnTop: method.documentation(owner: interface.name).joined(separator: "\n"))
            stack.pop()
        }
        stack.pop()
    }

    private func helpText(for index: Int32, in stack: LuaStack) -> String {
        switch stack.type(at: index) {
        case .none:
            return overview()
        case .nil:
            // help(obsrve): a misspelled name reads nil, and the overview would hide that.
            return "help(x): the value given is nil, so there is nothing to document: a misspelled or unset name reads nil; "
                + "check the name, or give it as a string (help(\"observe\")); help() shows the overview"
        case .userdata:
            if let box = anyObjectBox(at: index, in: stack) {
                let isService = services.contains { $0.madeService.map(ObjectIdentifier.init) == ObjectIdentifier(box.object) }
                return box.interface.documentation(as: isService ? "services.\(box.name)" : box.name)
                    + "\n\n" + Self.commonMethods(of: box)
            }
        case .function:
            tables.functionDocs.push(onto: stack)
            stack.pushValue(at: index)
            lua_rawget(stack.state, -2)
            defer { stack.pop(2) }
            if let text = stack.text(at: -1) { return text }
            if let entry = documentedGlobal(at: index, in: stack) { return entry.text }
        case .table:
            if let entry = documentedGlobal(at: index, in: stack) { return Self.text(of: entry) }
        case .string:
            let name = stack.text(at: index) ?? ""
            if let entry = GlobalDocs.entry(named: name) { return Self.text(of: entry) }
            // `services.geocoder` names the service as a script reads it: the same as `geocoder`.
            var parts = name.split(whereSeparator: { $0 == "." || $0 == ":" }).map(String.init)
            if parts.count > 1, parts.first == "services" { parts.removeFirst() }
            if let service = services.first(where: { $0.name == parts.first }) {
                if parts.count == 2, let method = service.interface.method(parts[1]) {
                    return method.documentation(owner: service.name).joined(separator: "\n")
                }
                if parts.count == 1 { return service.interface.documentation(as: "services.\(service.name)") }
            }
            // The objects services hand out (`collection`), by the names errors call them.
            if let object = ObjectInterfaces.standard.first(where: { $0.name == parts.first }) {
                if parts.count == 2, let method = object.method(parts[1]) { return method.documentation(owner: object.name).joined(separator: "\n") }
                if parts.count == 1 { return object.documentation(as: object.name) }
            }
            // `store.colection`: the closest of that service's or object's methods.
            let owner = services.first { $0.name == parts.first }?.interface ?? ObjectInterfaces.standard.first { $0.name == parts.first }
            if parts.count == 2, let owner, let method = NameSuggestion.closest(to: parts[1], among: owner.methods.map(\.name)) {
                return "help: no documentation for '\(name)' (\(owner.name) has no method '\(parts[1])'; did you mean '\(parts[0]).\(method)'?)"
            }
            let known = GlobalDocs.entries.map(\.name) + services.map(\.name) + ObjectInterfaces.standard.map(\.name)
            let closest = NameSuggestion.closest(to: name, among: known, prefixes: false).map { "did you mean '\($0)'? " } ?? ""
            return "help: no documentation for '\(name)' (\(closest)try help() for the list)"
        default:
            break
        }
        return "help: no documentation for this \(stack.typeName(at: index)) (try help() for the list)"
    }

    /// The methods every model object has, for `help(obj)`.
    static func commonMethods(of box: ObjectBox) -> String {
        var lines = ["Also (every object):"]
        for (signature, summary) in commonMethodDocs(of: box) { lines.append("  \(signature)\n      \(summary)") }
        return lines.joined(separator: "\n")
    }

    static func commonMethodDocs(of box: ObjectBox) -> [(String, String)] {
        let name = box.name
        var docs = [
            ("\(name):observe(key, handler[, { initial, coalesce, once, latest }])", "Observe a property; handler(new, old, change). Same as observe(obj, ...)."),
            ("\(name):on(event, handler[, { once }])", "Handle one of its events; handler(payload, info). Same as on(\"\(name).<event>\", ...)."),
            ("\(name):addObserver(observer)", "Deliver each event as observer:<event>(payload) when the observer has that method."),
            ("\(name):removeObserver(observer)", "Stop delivering events to the observer."),
        ]
        if box.object.asStartable != nil {
            docs.append(("\(name):start([options])", "Start the service for the calling owner (counted per owner; ends with the owner)."))
            docs.append(("\(name):stop()", "End the calling owner's share; the service stops when no share is left."))
        }
        return docs
    }

    /// Documents the binding's own methods of a freshly built object type.
    func documentCommonMethods(of type: LuaObjectType<ObjectBox>, box: ObjectBox) {
        let stack = vm.stack
        type.pushMethods(onto: stack)                                // methods
        for (signature, summary) in Self.commonMethodDocs(of: box) {
            let method = String(signature.split(separator: ":")[1].prefix { $0 != "(" })
            guard stack.rawGet(-1, method) == .function else {
                stack.pop()
                continue
            }
            document(functionOnTop: "\(signature)\n    \(summary)")
            stack.pop()
        }
        stack.pop()
    }

    /// The documented global or global-table member that is the value at `index`, found by raw
    /// lookups (no metamethod runs).
    private func documentedGlobal(at index: Int32, in stack: LuaStack) -> GlobalDocs.Entry? {
        let index = stack.absolute(index)
        for entry in GlobalDocs.entries {
            stack.pushGlobals()                                      // G
            var pushed: Int32 = 1
            for part in entry.name.split(separator: ".") {
                guard stack.type(at: -1) == .table else { break }
                stack.rawGet(-1, String(part))                       // ... value
                pushed += 1
            }
            let same = pushed == Int32(entry.name.split(separator: ".").count) + 1 && lua_rawequal(stack.state, -1, index) != 0
            stack.pop(pushed)
            if same { return entry }
        }
        return nil
    }

    /// An entry's text; a global table's lists its documented members too.
    private static func text(of entry: GlobalDocs.Entry) -> String {
        let members = GlobalDocs.members(of: entry.name)
        guard !members.isEmpty else { return entry.text }
        return ([entry.text, "", "Members (help(\"\(entry.name).<name>\")):"]
            + members.map { "  \($0.signature)\n      \($0.summary)" }).joined(separator: "\n")
    }

    private func overview() -> String {
        var lines = ["Crescent — Lua 5.4 controllers over a Swift model. help(x) for details.", "", "Globals:"]
        let globals = GlobalDocs.entries.filter { $0.table == nil }
        let width = globals.map(\.name.count).max() ?? 0
        for entry in globals { lines.append("  \(entry.name.padded(to: width))  \(entry.summary)") }
        lines.append("")
        if services.isEmpty {
            lines.append("Services: none registered.")
        } else {
            lines.append("Services (help(services.<name>)):")
            let width = services.map(\.name.count).max() ?? 0
            for service in services { lines.append("  " + service.interface.summaryLine(width: width)) }
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    /// The string followed by spaces up to `width` characters.
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
