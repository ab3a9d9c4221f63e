import Model

/// JSON text for the `json` output mode: model values and view trees.
enum JSONText {
    static func string(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    static func value(_ value: Value) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let integer): return String(integer)
        case .number(let number): return number.isFinite ? String(number) : "null"
        case .string(let text): return string(text)
        case .array(let items): return "[" + items.map(Self.value).joined(separator: ",") + "]"
        case .object(let fields): return object(fields)
        case .model(let model): return object(model.fields)
        case .handle(let handle): return string("<\(handle.typeName)>")
        }
    }

    private static func object(_ fields: [String: Value]) -> String {
        "{" + fields.keys.sorted().map { string($0) + ":" + value(fields[$0] ?? .null) }.joined(separator: ",") + "}"
    }

    /// `{"kind":"table","id":"items","rows":[...],"children":[...]}`.
    static func node(_ node: ViewNode) -> String {
        var parts = ["\"kind\":" + string(node.kind.rawValue)]
        if let id = node.id { parts.append("\"id\":" + string(id)) }
        for key in node.fields.keys.sorted() {
            parts.append(string(key) + ":" + value(node.fields[key] ?? .null))
        }
        if !node.children.isEmpty { parts.append("\"children\":[" + node.children.map(Self.node).joined(separator: ",") + "]") }
        if let content = node.content { parts.append("\"content\":" + Self.node(content)) }
        return "{" + parts.joined(separator: ",") + "}"
    }
}
