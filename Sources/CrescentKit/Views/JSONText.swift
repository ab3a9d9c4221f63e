import Model

/// JSON text for the `json` output mode: view trees, through Model's one JSON encoding.
enum JSONText {
    static func string(_ text: String) -> String { Value.jsonString(text) }

    static func value(_ value: Value) -> String { value.jsonText }

    /// `{"kind":"table","id":"items","rows":[...],"children":[...]}`.
    static func node(_ node: ViewNode) -> String {
        var parts = ["\"kind\":" + string(node.kind.name)]
        if let id = node.id { parts.append("\"id\":" + string(id)) }
        for key in node.fields.keys.sorted() {
            parts.append(string(key) + ":" + value(node.fields[key] ?? .null))
        }
        if !node.children.isEmpty { parts.append("\"children\":[" + node.children.map(Self.node).joined(separator: ",") + "]") }
        if let content = node.content { parts.append("\"content\":" + Self.node(content)) }
        return "{" + parts.joined(separator: ",") + "}"
    }
}
