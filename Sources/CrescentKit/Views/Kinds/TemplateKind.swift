import Model
import Mustache

/// `view.template`: a Mustache source (or a `file` beside the script) rendered with `data`, as
/// plain text (no HTML escaping).
enum TemplateKind: ViewKind {
    static let name = "template"
    static let fields = ["source", "data"]
    static let fileField: String? = "source"

    static func updateField(for value: Value) -> String? {
        switch value {
        case .object(let fields) where fields["source"] == nil && fields["file"] == nil: "data"
        case .model: "data"
        default: nil
        }
    }

    /// A malformed source is an error at the call site, and is not stored; so is a variable
    /// that data lacks when data has a field of a close name (`{{nme}}` with `name`: it showed
    /// `Hello !`).
    static func willSet(_ key: String, _ value: Value, on node: ViewNode) throws(ViewError) {
        if key == "data" {
            if let source = node.fields["source"]?.stringValue, let problem = missingVariable(in: source, data: value) {
                throw ViewError("view.template: \(problem)")
            }
            return
        }
        guard key == "source" else { return }
        if let source = value.stringValue, let data = node.fields["data"], let problem = missingVariable(in: source, data: data) {
            throw ViewError("view.template: \(problem)")
        }
        guard let source = value.stringValue else {
            node.template = nil
            return
        }
        let prefix = "{{% CONTENT_TYPE: TEXT}}"
        do {
            node.template = try MustacheTemplate(string: prefix + source)
            node.templateError = nil
        } catch {
            let diagnosis = TemplateDiagnosis(name: node.templateFile ?? "source", source: source)
            throw ViewError("view.template: \(diagnosis.message(for: error, prefixLength: prefix.count))")
        }
    }

    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String] {
        if let error = node.templateError { return cut([DisplayWidth.truncate(error, to: width)], to: limit) }
        guard let template = node.template else { return [] }
        let rendered = template.render(ViewNode.mustacheContext(node.fields["data"] ?? .object([:])))
        var lines = rendered.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return cut(lines.map { DisplayWidth.truncate($0, to: width) }, to: limit)
    }

    /// The first variable of `source` outside any section that `data` lacks while it has a
    /// field of a close name, as an error; nil when there is none.
    static func missingVariable(in source: String, data: Value) -> String? {
        guard let names = fieldNames(of: data), !names.isEmpty else { return nil }
        for tag in topLevelVariables(in: source) {
            let first = String(tag.prefix { $0 != "." })
            guard !names.contains(first), let closest = NameSuggestion.closest(to: first, among: names, prefixes: false) else { continue }
            return "{{\(tag)}} names no field of data (fields: \(names.sorted().joined(separator: ", "))); did you mean '\(closest)'?"
        }
        return nil
    }

    /// The variables of `source` outside any section that `data` lacks with no field of a close
    /// name (`{{subtitle}}` with data `{ title = ... }`): they render as nothing, which is right
    /// for an optional field and wrong for a forgotten one, so each is a warning (``warning(for:)``),
    /// not an error. Names once, in the order they appear.
    static func absentVariables(in source: String, data: Value) -> [String] {
        guard let names = fieldNames(of: data) else { return [] }
        var absent: [String] = []
        for tag in topLevelVariables(in: source) {
            let first = String(tag.prefix { $0 != "." })
            guard !names.contains(first), !absent.contains(first) else { continue }
            absent.append(first)
        }
        return absent
    }

    /// What a variable's warning says: that it shows nothing, the fields data has, and the two
    /// ways to say it is meant (a value, or a section that shows only when it has one).
    static func warning(for name: String, data: Value) -> String {
        let names = (fieldNames(of: data) ?? []).sorted()
        let fields = names.isEmpty ? "data has no fields" : "fields: \(names.joined(separator: ", "))"
        return "view.template: {{\(name)}} is not in data (\(fields)), so it shows nothing; give data a '\(name)' "
            + "(\"\" to show nothing), or if it is optional, show it in a section: {{#\(name)}}{{\(name)}}{{/\(name)}}"
    }

    private static func fieldNames(of data: Value) -> [String]? {
        switch data {
        case .object(let fields): fields.keys
        case .model(let model): model.fields.keys
        case .array(let items) where items.isEmpty: []   // `data = {}`: Lua's empty table
        default: nil
        }
    }

    /// The variables of `source` outside any section (`{{name}}`, `{{&name}}`, `{{{name}}}`,
    /// `{{a.b}}`), as written; `.` is not one. A source that changes its delimiters is not read.
    private static func topLevelVariables(in source: String) -> [String] {
        guard !source.contains("{{=") else { return [] }
        var variables: [String] = []
        var depth = 0
        var rest = Substring(source)
        while let open = rest.firstRange(of: "{{") {
            let triple = rest[open.upperBound...].hasPrefix("{")
            let bodyStart = triple ? rest.index(after: open.upperBound) : open.upperBound
            guard let close = rest[bodyStart...].firstRange(of: triple ? "}}}" : "}}") else { break }
            var tag = rest[bodyStart..<close.lowerBound].trimmingSpaces
            rest = rest[close.upperBound...]
            switch tag.first {
            case "#", "^": depth += 1; continue
            case "/": depth -= 1; continue
            case "!", ">", "%", "=": continue
            case "&": tag = String(tag.dropFirst()).trimmingSpaces
            default: break
            }
            guard depth == 0, !tag.isEmpty, tag != ".", !tag.hasPrefix(".") else { continue }
            variables.append(tag)
        }
        return variables
    }
}
