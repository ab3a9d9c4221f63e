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

    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String] {
        let text = node.fields["text"].map(ViewNode.text) ?? ""
        return cut(text.split(separator: "\n", omittingEmptySubsequences: false).map { DisplayWidth.truncate(String($0), to: width) },
                   to: limit)
    }
}
