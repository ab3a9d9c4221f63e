import Model

/// A service as a run-time plugin declares it (Lua's `service(...)`, a process's `initialize`
/// answer): the same four parts as a Swift declaration, as data.
struct ServiceDeclaration: Sendable {
    struct Property: Sendable {
        let name: String
        let type: String
        let doc: String
        var value: Value
    }

    struct Method: Sendable {
        let name: String
        let arguments: [ArgumentSpec]
        let returns: String
        let doc: String
        /// `returns` read once, as each value the method answers is checked against it.
        let result: ResultCheck

        init(name: String, arguments: [ArgumentSpec], returns: String, doc: String, declaredAt: String = "") {
            self.name = name
            self.arguments = arguments
            self.returns = returns
            self.doc = doc
            result = ResultCheck(returns: returns, declaredAt: declaredAt)
        }
    }

    let name: String
    let summary: String
    var properties: [Property] = []
    var methods: [Method] = []
    var events: [EventSpec] = []

    init(name: String, summary: String) {
        self.name = name
        self.summary = summary
    }

    /// What a declared member is, for messages.
    enum MemberKind: String {
        case property, method, event
    }

    /// The members every service object has (ModelBinding+observation): a property or method of
    /// that name would hide them (a method `addObserver` got the delegates, none registered).
    static let objectMembers: Set<String> = ["addObserver", "removeObserver", "observe", "on"]

    /// Why `name` cannot be declared as a `kind` of this service (nil when it can): a name is a Lua
    /// identifier (`[A-Za-z_][A-Za-z0-9_]*`, at most 100 characters), not one of the service
    /// object's own members, and not already a property or method (events apart).
    func memberProblem(_ name: String, _ kind: MemberKind) -> String? {
        let bytes = Array(name.utf8)
        let isWord = { (byte: UInt8) in (byte | 0x20) >= 97 && (byte | 0x20) <= 122 || byte == 95 }
        guard let first = bytes.first, isWord(first), bytes.count <= 100,
              bytes.allSatisfy({ isWord($0) || ($0 >= 48 && $0 <= 57) }) else {
            return "\(kind.rawValue) name \(Value.string(name).jsonText) of service '\(self.name)' must be an identifier matching [A-Za-z_][A-Za-z0-9_]* (at most 100 characters)"
        }
        if kind == .event {
            guard !events.contains(where: { $0.name == name }) else { return "event '\(name)' of service '\(self.name)' is declared twice" }
            return nil
        }
        if Self.objectMembers.contains(name) {
            return "\(kind.rawValue) '\(name)' of service '\(self.name)' would hide the service object's own \(name) (\(Self.objectMembers.sorted().joined(separator: ", "))): choose another name"
        }
        if properties.contains(where: { $0.name == name }) || methods.contains(where: { $0.name == name }) {
            return "\(kind.rawValue) '\(name)' of service '\(self.name)': the service already has a property or method of that name"
        }
        return nil
    }

    /// Reads `name: type` (`location: location?`): a trailing `?` makes the argument optional.
    static func argument(_ text: String) -> ArgumentSpec? {
        let parts = text.split(separator: ":", maxSplits: 1).map(\.trimmingSpaces)
        guard let name = parts.first, !name.isEmpty else { return nil }
        var type = parts.count > 1 ? parts[1] : "value"
        let optional = type.hasSuffix("?")
        if optional { type.removeLast() }
        return ArgumentSpec(name, argumentType(type), "", optional: optional)
    }

    /// True when `value` fits a type declared in words: a property's (`number`, `place?`,
    /// `{strings}`, `string|number`) or an event's payload (`{ place }`, `{ stream, line }`: a
    /// table with those fields, named with spaces inside the braces as the docs write payloads).
    /// nil fits every type (a property not set yet, an event without a payload), and an event
    /// declared without a payload type (`nil`) takes any payload.
    static func value(_ value: Value, fits type: String) -> Bool {
        value.isNull || fittingType(type).accepts(value)
    }

    /// The shape a non-nil value must have to fit `type` (``value(_:fits:)``): `nil` and an
    /// empty type take any, a union is `oneOf` its parts, a payload `{ a, b }` is a table.
    static func fittingType(_ type: String) -> ArgumentType {
        var word = type.trimmingSpaces
        if word.hasSuffix("?") { word.removeLast() }
        if word == "nil" || word.isEmpty { return .any }
        // In a union, `nil` admits only nil (``value(_:fits:)`` takes nil first): alone it means
        // "any payload", which made `location|nil` take a string.
        if word.contains("|") {
            return .oneOf(word.split(separator: "|").filter { $0.trimmingSpaces != "nil" }.map { fittingType(String($0)) })
        }
        if word.hasPrefix("{"), word.hasSuffix("}") {
            let inner = word.dropFirst().dropLast()
            if inner.contains(",") || inner.first == " " || inner.last == " " || inner.isEmpty {
                return .table
            }
        }
        return argumentType(word)
    }

    /// True when `value` fits a property of `type`: as ``value(_:fits:)``, except that nil fits
    /// only a type that takes it (`place?`, `value`, a union with `nil`): a property declared
    /// `number` never reads nil.
    static func value(_ value: Value, fitsProperty type: String) -> Bool {
        guard value.isNull else { return Self.value(value, fits: type) }
        return takesNil(type)
    }

    /// True when a property of `type` may be nil.
    static func takesNil(_ type: String) -> Bool {
        let word = type.trimmingSpaces
        if word.hasSuffix("?") || word.isEmpty { return true }
        return word.split(separator: "|").contains { ["nil", "value", "any"].contains($0.trimmingSpaces) }
    }

    /// Why a property's initial value does not fit its type (nil when it does), for the
    /// declaration's error.
    static func initialProblem(_ value: Value, property: String, type: String) -> String? {
        if let misspelled = misspelledType(type) { return "property '\(property)': \(misspelled)" }
        guard !Self.value(value, fitsProperty: type) else { return nil }
        if value.isNull {
            return "property '\(property)' is declared \(type), which never reads nil: give it an initial value of that type, "
                + "or declare it \(type)? when it may be nil"
        }
        return "the initial value of property '\(property)' is \(value.typeName), not its type \(type)"
    }

    /// The checked shape of a type written in words: `string`, `number`, `integer`, `boolean`,
    /// `table`, `location` (a record with `lat` and `lon`), `{T}` (an array), `value`; any other
    /// word is a table of that name.
    /// `{T}` inside one another, deeper than this, is refused (``typeProblem(_:)``): the checks
    /// and the docs walk a type by recursion, and a plugin's declaration is not trusted.
    static let deepestArray = 16

    /// Why an argument's type cannot be declared, or nil: an array nested deeper than ``deepestArray``,
    /// or a type's word misspelled (``misspelledType(_:)``).
    static func typeProblem(_ written: String) -> String? {
        let type = written.trimmingSpaces.hasSuffix("?") ? String(written.trimmingSpaces.dropLast()) : written.trimmingSpaces
        let depth = zip(type.utf8, type.utf8.reversed()).prefix { $0 == UInt8(ascii: "{") && $1 == UInt8(ascii: "}") }.count
        guard depth > deepestArray else { return misspelledType(written) }
        return "its type nests {…} \(depth) levels deep, more than the \(deepestArray) a type may"
    }

    /// The words of the built-in types.
    static let typeWords = ["string", "number", "integer", "boolean", "table", "location", "value", "any", "nil"]

    /// Why `written` is no type when one of its words is a type's misspelled (`strng`,
    /// `interger`): any other word names a table, so the misspelling was taken as one and a
    /// string argument was then refused as "not a strng". Nil when no word is.
    static func misspelledType(_ written: String) -> String? {
        for part in written.split(separator: "|") {
            var inner = Substring(part.trimmingSpaces)
            if inner.hasSuffix("?") { inner = inner.dropLast() }
            // At most as deep as a type may nest, without copying: a declaration is not trusted.
            var depth = 0
            while depth <= deepestArray, inner.hasPrefix("{"), inner.hasSuffix("}"), inner.count >= 2 {
                inner = inner.dropFirst().dropLast()
                depth += 1
            }
            let word = inner.trimmingSpaces
            // `{strings}` is an array of strings, as `{string}` is.
            if typeWords.contains(word) || (word.hasSuffix("s") && typeWords.contains(String(word.dropLast()))) { continue }
            guard let closest = NameSuggestion.closest(to: word, among: typeWords, prefixes: false) else { continue }
            return "'\(word)' is not a type (types: string, number, integer, boolean, table, location, {T}, value; another word names a table); "
                + "did you mean '\(closest)'?"
        }
        return nil
    }

    static func argumentType(_ word: String) -> ArgumentType {
        var element = Substring(word)
        var depth = 0
        // `{strings}` and `{string}` both read as an array of strings. Unwound by a loop: a
        // declaration that got past typeProblem still cannot nest deeper than the bound.
        while element.hasPrefix("{"), element.hasSuffix("}"), element.count >= 2, depth <= deepestArray {
            element = element.dropFirst().dropLast()
            if element.hasSuffix("s") { element = element.dropLast() }
            depth += 1
        }
        guard depth > 0 else { return wordType(word) }
        var type = depth > deepestArray ? ArgumentType.table : wordType(String(element))
        for _ in 0..<min(depth, deepestArray) { type = .array(of: type) }
        return type
    }

    private static func wordType(_ word: String) -> ArgumentType {
        // A switch, not a dictionary: start-up reads the recorded declarations of plugins, and a
        // dictionary of the words was built and hashed for every argument.
        switch word {
        case "string": return .string
        case "number": return .number
        case "integer": return .integer
        case "boolean": return .boolean
        case "table", "array", "object": return .table
        case "location": return .record("location", fields: [ArgumentType.Field("lat", .number), ArgumentType.Field("lon", .number)])
        case "", "value", "any": return .any
        default: return .record(word, fields: [])
        }
    }

    /// The declaration with every text in it that a terminal would not show as written (an
    /// escape sequence in a doc, a right-to-left override in a name) written as escapes: a
    /// plugin's declarations are printed by `crescent services`, `help` and completion.
    func displayable() -> ServiceDeclaration {
        var copy = ServiceDeclaration(name: name, summary: Model.displayable(summary))
        copy.properties = properties.map { Property(name: Model.displayable($0.name), type: Model.displayable($0.type),
                                                    doc: Model.displayable($0.doc), value: $0.value) }
        copy.methods = methods.map { method in
            Method(name: Model.displayable(method.name),
                   arguments: method.arguments.map { ArgumentSpec(Model.displayable($0.name), $0.type, Model.displayable($0.summary),
                                                                  optional: $0.isOptional) },
                   returns: Model.displayable(method.returns), doc: Model.displayable(method.doc),
                   declaredAt: Model.displayable(method.result.declaredAt))
        }
        copy.events = events.map { EventSpec(name: Model.displayable($0.name), payload: Model.displayable($0.payload),
                                             summary: Model.displayable($0.summary)) }
        return copy
    }

    /// True when some text of the declaration needs ``displayable()``.
    var needsDisplayEscapes: Bool {
        let texts = [summary] + properties.flatMap { [$0.name, $0.type, $0.doc] }
            + methods.flatMap { [$0.name, $0.returns, $0.doc] + $0.arguments.flatMap { [$0.name, $0.summary] } }
            + events.flatMap { [$0.name, $0.payload, $0.summary] }
        return texts.contains { displayHazard(in: $0, allowingLines: true) != nil }
    }
}
