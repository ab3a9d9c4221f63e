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

    /// A malformed source is an error at the call site, and is not stored; so is a name that
    /// data lacks when data has a field of a close name (`{{nme}}` with `name`: it showed
    /// `Hello !`), in a section too.
    static func willSet(_ key: String, _ value: Value, on node: ViewNode) throws(ViewError) {
        if key == "data" {
            if let source = node.fields["source"]?.stringValue, let problem = missingVariable(in: source, data: value, file: node.templateFile) {
                throw ViewError("view.template: \(problem)")
            }
            return
        }
        guard key == "source" else { return }
        if let source = value.stringValue, let data = node.fields["data"], let problem = missingVariable(in: source, data: data, file: node.templateFile) {
            throw ViewError("view.template: \(problem)")
        }
        guard let source = value.stringValue else {
            node.template = nil
            return
        }
        if let partial = partialTag(in: source, named: node.templateFile ?? "source") { throw ViewError("view.template: \(partial)") }
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

    /// A partial tag (`{{> header}}`) rendered as nothing, since a template has no partials to
    /// give: the error naming its `name:line:column`; nil when there is none. A source that
    /// changes its delimiters is not read.
    static func partialTag(in source: String, named name: String) -> String? {
        guard !source.contains("{{="), let open = source.firstRange(of: /\{\{\s*>/) else { return nil }
        let rest = source[open.lowerBound...]
        var tag = rest[..<(rest.firstRange(of: "}}")?.upperBound ?? rest.endIndex)]
        if let newline = tag.firstIndex(of: "\n") { tag = tag[..<newline] }
        return "\(place(of: open.lowerBound, in: source, file: name)): \(tag) is a partial, which view.template cannot show (a template has no partials): "
            + "put the partial's text in the source, or show it as a view of its own"
    }

    /// The first name of `source` that `data` lacks while it has a field of a close name, as an
    /// error (``TemplateVariables``); nil when there is none. A template read from `file` names
    /// the tag's `file:line:column` too, as its parse errors do.
    static func missingVariable(in source: String, data: Value, file: String?) -> String? {
        guard let finding = TemplateVariables.check(source, data: data).first(where: { $0.closest != nil }) else { return nil }
        guard let file, let at = source.firstRange(of: "{{\(finding.tag)}}") ?? source.firstRange(of: "{{ \(finding.tag) }}") else {
            return finding.error
        }
        return "\(place(of: at.lowerBound, in: source, file: file)): \(finding.error)"
    }

    /// `name:line:column` of `index` in `source` (both counted from 1).
    private static func place(of index: String.Index, in source: String, file name: String) -> String {
        let before = source[..<index]
        let line = before.count { $0 == "\n" } + 1
        let column = before.distance(from: before.lastIndex(of: "\n").map(before.index(after:)) ?? before.startIndex, to: before.endIndex) + 1
        return "\(name):\(line):\(column)"
    }
}
