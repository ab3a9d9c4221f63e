import Model

/// `view.text`: a string (or number, or boolean) shown line by line, each cut to the width.
enum TextKind: ViewKind {
    static let name = "text"
    static let fields = ["text", "style"]

    static func updateField(for value: Value) -> String? {
        switch value {
        case .string, .integer, .number, .bool: "text"
        default: nil
        }
    }

    static func constructorFields(bare value: Value) -> Fields? { ["text": value] }

    /// The styles `style` names.
    static let styles = ["plain", "bold", "dim", "italic", "underline", "reverse"]

    /// A style that is none of ``styles`` (`"bolt"`) is an error where it is set.
    static func willSet(_ key: String, _ value: Value, on node: ViewNode) throws(ViewError) {
        guard key == "style", let style = value.stringValue, !styles.contains(style) else { return }
        let listing = NameSuggestion.listing("styles", styles, suggesting: NameSuggestion.closest(to: style, among: styles))
        throw ViewError("view.text: no style '\(style)' (\(listing))")
    }

    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String] {
        let text = node.fields["text"].map(ViewNode.text) ?? ""
        return cut(text.split(separator: "\n", omittingEmptySubsequences: false).map { DisplayWidth.truncate(String($0), to: width) },
                   to: limit)
    }
}
