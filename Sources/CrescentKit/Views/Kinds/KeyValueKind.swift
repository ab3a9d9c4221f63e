import Model

/// `view.keyvalue`: a record's fields (sorted by key) or `{ {key, value}, ... }` pairs (in
/// order), keys in a column.
enum KeyValueKind: ViewKind {
    static let name = "keyvalue"
    static let fields = ["pairs"]

    static func updateField(for value: Value) -> String? {
        switch value {
        case .model, .array: "pairs"
        case .object(let fields) where fields["pairs"] == nil: "pairs"
        default: nil
        }
    }

    /// A list entry that is neither `{ key, value }` nor `{ key = ..., value = ... }` is an error
    /// where it is set: `update({ { "a" } })` showed a blank line.
    static func willSet(_ key: String, _ value: Value, on node: ViewNode) throws(ViewError) {
        guard key == "pairs", case .array(let items) = value else { return }
        for (index, item) in items.enumerated() {
            if let pair = item.arrayValue, pair.count == 2 { continue }
            if case .object(let fields) = item, fields["key"] != nil, fields.count <= 2,
               fields.keys.allSatisfy({ $0 == "key" || $0 == "value" }) { continue }
            throw ViewError("view.keyvalue: pair \(index + 1) must be { key, value } or { key = ..., value = ... }, got "
                + "\(item.jsonText.prefix(60)) (a record shows as it is: pairs = { place = \"x\" })")
        }
    }

    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String] {
        let pairs = pairs(of: node)
        let keyWidth = min(pairs.map { DisplayWidth.of($0.0) }.max() ?? 0, max(width / 2, 1))
        return cut(pairs.map { key, value in
            DisplayWidth.truncate(DisplayWidth.fit(key, to: keyWidth) + "  " + value, to: width)
        }, to: limit)
    }

    private static func pairs(of node: ViewNode) -> [(String, String)] {
        guard let pairs = node.fields["pairs"] else { return [] }
        switch pairs {
        case .object(let map): return map.sorted { $0.key < $1.key }.map { ($0.key, ViewNode.text($0.value)) }
        case .model(let model): return model.fields.sorted { $0.key < $1.key }.map { ($0.key, ViewNode.text($0.value)) }
        case .array(let items):
            return items.map { item in
                if let pair = item.arrayValue, pair.count >= 2 { return (ViewNode.text(pair[0]), ViewNode.text(pair[1])) }
                return (ViewNode.text(item["key"]), ViewNode.text(item["value"]))
            }
        default: return []
        }
    }
}
