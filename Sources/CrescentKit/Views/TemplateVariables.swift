import Model

/// What a Mustache template's variables and sections find in its data, read as Mustache reads
/// them: a name is looked up in the section contexts from the innermost out, a section over a
/// list or record makes its items the innermost context, and a dotted name walks into records.
///
/// A name that its context lacks while the context has a field of a close name is a
/// misspelling (`{{nme}}` with `name`), an error where the data is given; one with no close
/// field renders as nothing, which is right for an optional field and silent for a forgotten
/// one, so it is a warning. A declared field of a model that this model lacks is neither: the
/// model's type says the field may be absent. Where what a section shows depends on data the
/// template does not have (a section over an absent or empty value, whose body never renders)
/// nothing inside it is judged; a source that changes its delimiters is not read.
struct TemplateVariables {
    /// One variable or section name that its data does not have.
    struct Finding: Equatable {
        /// The tag as written (`nme`, `user.nme`).
        let tag: String
        /// The step of the tag its context lacks (`nme` of `user.nme`, `usr` of `usr.name`).
        let missing: String
        /// Where it was looked up, as messages say it: `data`, or the section or record
        /// (`items`, `user`).
        let owner: String
        /// The fields it could have named there, sorted.
        let fields: [String]
        /// The close field it most likely means; nil when there is none (a warning).
        let closest: String?

        /// The error of a misspelling: `{{nme}} names no field of data (fields: name); did you mean 'name'?`.
        var error: String {
            "{{\(tag)}} names no field of \(owner) (fields: \(fields.joined(separator: ", "))); did you mean '\(closest ?? "")'?"
        }

        /// The warning of a name with no close field, with the two ways to mean it.
        var warning: String {
            let listing = fields.isEmpty ? "\(owner) has no fields" : "fields: \(fields.joined(separator: ", "))"
            // `t:update({ data = { a = 2 } })`, as in the constructor: the whole table became the data.
            if owner == "data" && fields == ["data"] {
                return "{{\(tag)}} is not in data (fields: data), so it shows nothing: a template's update takes the data itself, "
                    + "t:update({ \(missing) = ... }), not t:update({ data = { ... } })"
            }
            return "{{\(tag)}} is not in \(owner) (\(listing)), so it shows nothing; give \(owner) a '\(missing)' (\"\" to show nothing), "
                + "or if it is optional, show it in a section: {{#\(tag)}}{{\(tag)}}{{/\(tag)}}"
        }
    }

    /// The findings of `source` against `data`, each tag once, in the order they appear.
    static func check(_ source: String, data: Value) -> [Finding] {
        guard let root = Scope(values: [data], label: "data"), !source.contains("{{=") else { return [] }
        var checker = TemplateVariables(stack: [.known(root)])
        checker.walk(source)
        return checker.findings
    }

    /// A section's context: the records it may be (every item of a list), or unknown.
    private enum Context {
        case known(Scope)
        /// An inverted section or one over a plain value: the context is the one outside it.
        case same
        /// A section whose body never renders with this data: nothing inside is judged.
        case unknown
    }

    private struct Scope {
        /// The records (objects and models) this context may be.
        let values: [Value]
        let label: String

        /// Nil when none of `values` is a record (nothing to look names up in).
        init?(values: [Value], label: String) {
            let records = values.filter(Self.isRecord)
            guard !records.isEmpty else { return nil }
            self.values = records
            self.label = label
        }

        static func isRecord(_ value: Value) -> Bool {
            switch value {
            case .object, .model: true
            case .array(let items): items.isEmpty   // Lua's empty table as data: a record with no fields
            default: false
            }
        }

        /// Every name a record here has (a model: every field its type declares).
        var names: [String] {
            var seen: [String] = []
            for value in values {
                let keys: [String] = switch value {
                case .object(let fields): fields.keys
                case .model(let model): model.schema.names
                default: []
                }
                for key in keys where !seen.contains(key) { seen.append(key) }
            }
            return seen
        }

        /// Whether some record here has `name` (a model: declares it).
        func has(_ name: String) -> Bool {
            values.contains { value in
                switch value {
                case .object(let fields): fields[name] != nil
                case .model(let model): model.schema.position(of: name) != nil
                default: false
                }
            }
        }

        /// The values `name` holds in the records that have it (a model's absent field: none).
        func values(of name: String) -> [Value] {
            values.compactMap { value in
                switch value {
                case .object(let fields): fields[name]
                case .model(let model): model[name].isNull ? nil : model[name]
                default: nil
                }
            }
        }
    }

    private var stack: [Context]
    private var findings: [Finding] = []

    private init(stack: [Context]) { self.stack = stack }

    private mutating func walk(_ source: String) {
        var rest = Substring(source)
        while let open = rest.firstRange(of: "{{") {
            let triple = rest[open.upperBound...].hasPrefix("{")
            let bodyStart = triple ? rest.index(after: open.upperBound) : open.upperBound
            guard let close = rest[bodyStart...].firstRange(of: triple ? "}}}" : "}}") else { return }
            var tag = rest[bodyStart..<close.lowerBound].trimmingSpaces
            rest = rest[close.upperBound...]
            switch tag.first {
            case "#": enterSection(String(tag.dropFirst()).trimmingSpaces); continue
            case "^": enterInverted(String(tag.dropFirst()).trimmingSpaces); continue
            case "/": if stack.count > 1 { stack.removeLast() }; continue
            case "!", ">", "%", "=": continue
            case "&": tag = String(tag.dropFirst()).trimmingSpaces
            default: break
            }
            _ = resolve(tag)
        }
    }

    private mutating func enterSection(_ tag: String) {
        guard let values = resolve(tag, absentIsMeant: true) else {
            stack.append(.unknown)
            return
        }
        // A section over null or false never renders.
        let shown = values.filter { !$0.isNull && $0 != .bool(false) }
        guard !shown.isEmpty else {
            stack.append(.unknown)
            return
        }
        var items: [Value] = []
        for value in shown {
            if case .array(let elements) = value { items += elements } else { items.append(value) }
        }
        if items.isEmpty {
            stack.append(.unknown)   // an empty list: the body never renders
        } else if let scope = Scope(values: items, label: tag) {
            stack.append(.known(scope))
        } else {
            stack.append(.same)
        }
    }

    /// An inverted section renders with the context outside it (when its value is absent or
    /// empty), so its body is judged there; its own name is judged like any other.
    private mutating func enterInverted(_ tag: String) {
        _ = resolve(tag, absentIsMeant: true)
        stack.append(.same)
    }

    /// The values `tag` names, judging each step; nil when it names nothing this data has (or
    /// what it names cannot be known). A section's name that is absent is what a section is
    /// for (`{{#subtitle}}`), so only a misspelled one is recorded (`absentIsMeant`).
    private mutating func resolve(_ tag: String, absentIsMeant: Bool = false) -> [Value]? {
        guard !tag.isEmpty, tag != "." else { return nil }
        let parts = tag.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !parts.contains(where: \.isEmpty) else { return nil }
        // Mustache looks a name up from the innermost context out.
        var found: [Value]?
        var innermost: Scope?
        var everyName: [String] = []
        for context in stack.reversed() {
            switch context {
            case .unknown: return nil
            case .same: continue
            case .known(let scope):
                if innermost == nil { innermost = scope }
                if found == nil, scope.has(parts[0]) { found = scope.values(of: parts[0]) }
                for name in scope.names where !everyName.contains(name) { everyName.append(name) }
            }
        }
        guard let innermost else { return nil }
        guard var values = found else {
            record(tag, missing: parts[0], owner: innermost.label, fields: innermost.names, candidates: everyName, absentIsMeant: absentIsMeant)
            return nil
        }
        var path = parts[0]
        for part in parts.dropFirst() {
            guard let scope = Scope(values: values, label: path) else { return nil }   // not records: cannot tell
            guard scope.has(part) else {
                record(tag, missing: part, owner: path, fields: scope.names, candidates: scope.names, absentIsMeant: absentIsMeant)
                return nil
            }
            values = scope.values(of: part)
            path += "." + part
        }
        return values
    }

    /// Records `tag`, whose step `missing` (`usr` of `usr.name`, the first that its context
    /// lacks) is the name judged against `candidates`.
    private mutating func record(_ tag: String, missing: String, owner: String, fields: [String], candidates: [String], absentIsMeant: Bool) {
        guard !findings.contains(where: { $0.tag == tag }) else { return }
        let closest = NameSuggestion.closest(to: missing, among: candidates, prefixes: false)
        if absentIsMeant && closest == nil { return }
        findings.append(Finding(tag: tag, missing: missing, owner: owner, fields: fields.sorted(), closest: closest))
    }
}
