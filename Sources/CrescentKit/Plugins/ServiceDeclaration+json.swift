import Model

/// Declarations as data in the shape of a process plugin's `initialize` answer (DESIGN.md): what
/// a process sends, and what the host keeps of any plugin's declarations between runs.
extension ServiceDeclaration {
    /// Reads the `services` array of an `initialize` answer.
    ///
    /// - Throws: what is wrong, naming the entry (`services[2].name`).
    static func list(from services: Value) throws(PluginProblem) -> [ServiceDeclaration] {
        guard let services = services.arrayValue else {
            throw PluginProblem("its answer to 'initialize' has no 'services' array")
        }
        var declarations: [ServiceDeclaration] = []
        for (index, service) in services.enumerated() {
            guard let name = service["name"].stringValue, PluginNames.isValid(name) else {
                throw PluginProblem("its answer to 'initialize': services[\(index + 1)].name must be a name matching \(PluginNames.rule)")
            }
            guard !declarations.contains(where: { $0.name == name }) else {
                throw PluginProblem("its answer to 'initialize': services[\(index + 1)]: service '\(name)' is listed twice")
            }
            let place = "services[\(index + 1)]"
            try checkKeys(service, Keys.service, at: place)
            var declaration = ServiceDeclaration(name: name, summary: service["summary"].stringValue ?? "")
            let member = { (key: String, kind: MemberKind) throws(PluginProblem) in
                if let problem = declaration.memberProblem(key, kind) { throw PluginProblem("its answer to 'initialize': \(problem)") }
            }
            for (position, property) in (service["properties"].arrayValue ?? []).enumerated() {
                guard let key = property["name"].stringValue else { throw PluginProblem("its answer to 'initialize': a property of '\(name)' has no name") }
                try checkKeys(property, Keys.property, at: "\(place).properties[\(position + 1)] ('\(key)')")
                try member(key, .property)
                let type = property["type"].stringValue ?? "value"
                if let problem = ServiceDeclaration.initialProblem(property["value"], property: key, type: type) {
                    throw PluginProblem("its answer to 'initialize': services[\(index + 1)].properties[\(position + 1)]: \(problem)")
                }
                declaration.properties.append(.init(name: key, type: type, doc: property["doc"].stringValue ?? "", value: property["value"]))
            }
            for (methodPosition, method) in (service["methods"].arrayValue ?? []).enumerated() {
                guard let key = method["name"].stringValue else { throw PluginProblem("its answer to 'initialize': a method of '\(name)' has no name") }
                try member(key, .method)
                let methodPlace = "\(place).methods[\(methodPosition + 1)] ('\(key)')"
                try checkKeys(method, Keys.method, at: methodPlace)
                for (position, argument) in (method["args"].arrayValue ?? []).enumerated() {
                    try checkKeys(argument, Keys.argument, at: "\(methodPlace).args[\(position + 1)]")
                    if let problem = ServiceDeclaration.typeProblem(argument["type"].stringValue ?? "") {
                        throw PluginProblem("its answer to 'initialize': method '\(key)' of '\(name)', argument \(position + 1): \(problem)")
                    }
                }
                if let problem = ServiceDeclaration.typeProblem(method["returns"].stringValue ?? "nil") {
                    throw PluginProblem("its answer to 'initialize': method '\(key)' of '\(name)', its return type: \(problem)")
                }
                let arguments = (method["args"].arrayValue ?? []).compactMap { argument -> ArgumentSpec? in
                    guard let argumentName = argument["name"].stringValue,
                          let spec = ServiceDeclaration.argument("\(argumentName): \(argument["type"].stringValue ?? "value")") else { return nil }
                    guard let doc = argument["doc"].stringValue else { return spec }
                    return ArgumentSpec(spec.name, spec.type, doc, optional: spec.isOptional)
                }
                declaration.methods.append(.init(name: key, arguments: arguments, returns: method["returns"].stringValue ?? "nil",
                                                 doc: method["doc"].stringValue ?? ""))
            }
            for (position, event) in (service["events"].arrayValue ?? []).enumerated() {
                guard let key = event["name"].stringValue else { throw PluginProblem("its answer to 'initialize': an event of '\(name)' has no name") }
                try checkKeys(event, Keys.event, at: "\(place).events[\(position + 1)] ('\(key)')")
                try member(key, .event)
                declaration.events.append(EventSpec(name: key, payload: event["payload"].stringValue ?? "nil", summary: event["doc"].stringValue ?? ""))
            }
            declarations.append(declaration)
        }
        return declarations.map { $0.displayable() }
    }

    /// The keys each table of the answer takes (DESIGN.md, `initialize`), which ``jsonValue`` writes.
    private enum Keys {
        static let service = ["name", "summary", "properties", "methods", "events"]
        static let property = ["name", "type", "doc", "value"]
        static let method = ["name", "args", "returns", "doc"]
        static let argument = ["name", "type", "doc"]
        static let event = ["name", "payload", "doc"]
    }

    /// Refuses a key the table at `place` does not take: a misspelled `methds` or `dc` would
    /// leave the service without its methods or docs, and `plugin check` would say ok.
    private static func checkKeys(_ table: Value, _ known: [String], at place: String) throws(PluginProblem) {
        guard case .object(let fields) = table, let unknown = fields.keys.first(where: { !known.contains($0) }) else { return }
        let closest = NameSuggestion.closest(to: unknown, among: known)
        throw PluginProblem("its answer to 'initialize': \(place) has no key '\(unknown)' (\(NameSuggestion.listing("keys", known, suggesting: closest)))")
    }

    /// This declaration as one entry of an `initialize` answer's `services`; ``list(from:)``
    /// reads it back.
    var jsonValue: Value {
        [
            "name": .string(name),
            "summary": .string(summary),
            "properties": .array(properties.map { property in
                ["name": .string(property.name), "type": .string(property.type), "doc": .string(property.doc), "value": property.value]
            }),
            "methods": .array(methods.map { method in
                [
                    "name": .string(method.name),
                    "args": .array(method.arguments.map { argument in
                        ["name": .string(argument.name), "type": .string(argument.type.shortName + (argument.isOptional ? "?" : "")),
                         "doc": .string(argument.summary)]
                    }),
                    "returns": .string(method.returns),
                    "doc": .string(method.doc),
                ]
            }),
            "events": .array(events.map { event in
                ["name": .string(event.name), "payload": .string(event.payload), "doc": .string(event.summary)]
            }),
        ]
    }
}
