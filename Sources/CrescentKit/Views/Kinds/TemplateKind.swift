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

    /// The first name of `source` that `data` lacks while it has a field of a close name, as an
    /// error (``TemplateVariables``); nil when there is none.
    static func missingVariable(in source: String, data: Value) -> String? {
        TemplateVariables.check(source, data: data).first { $0.closest != nil }?.error
    }
}
