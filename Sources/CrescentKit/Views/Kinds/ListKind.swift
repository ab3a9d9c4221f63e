import Model

/// `view.list`: items one per line after a marker; with `selectable = true` the selected one is
/// marked `>` and the rows shown follow it.
enum ListKind: ViewKind {
    static let name = "list"
    static let fields = ["items", "marker", "selectable"]
    static let takesPositionalItems = true
    static let rowsField: String? = "items"

    static func updateField(for value: Value) -> String? {
        if case .array = value { "items" } else { nil }
    }

    static func constructorFields(bare value: Value) -> Fields? { ["items": .array([value])] }

    static func didSet(_ key: String, on node: ViewNode) {
        if key == "selectable" { node.configureSelection() }
    }

    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String] {
        let marker = node.fields["marker"]?.stringValue ?? "-"
        let items = node.fields["items"]?.arrayValue ?? []
        guard let selection = node.selection else {
            return cut(items.map { DisplayWidth.truncate("\(marker) \(ViewNode.text($0))", to: width) }, to: limit)
        }
        // A selectable list shows the rows from the first one on screen, the selected one
        // marked `>`.
        let first = items.count > limit ? node.firstShownRow(rows: limit) : 0
        return items[first..<min(first + limit, items.count)].indices.map { index in
            let pointer = index == selection.index ? "> " : "  "
            return DisplayWidth.truncate("\(pointer)\(marker) \(ViewNode.text(items[index]))", to: width)
        }
    }
}
