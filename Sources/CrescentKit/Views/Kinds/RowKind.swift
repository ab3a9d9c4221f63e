import Model

/// `view.row`: children side by side, sharing the width equally, two spaces between them.
enum RowKind: ViewKind {
    static let name = "row"
    static let fields = ["gap"]
    static let holdsChildren = true

    private static let separator = 2

    /// The width each child gets: an equal share, less the separators.
    static func share(of node: ViewNode, width: Int) -> Int {
        max((width - separator * (node.children.count - 1)) / max(node.children.count, 1), 1)
    }

    /// The first `limit` lines of each child, side by side.
    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String] {
        guard !node.children.isEmpty else { return [] }
        let share = share(of: node, width: width)
        let columns = node.children.map { $0.lines(width: share, limit: limit) }
        let height = columns.map(\.count).max() ?? 0
        return (0..<height).map { line in
            var parts: [String] = []
            for (index, column) in columns.enumerated() {
                let text = line < column.count ? column[line] : ""
                parts.append(index == columns.count - 1 ? text : DisplayWidth.pad(text, to: share))
            }
            var joined = parts.joined(separator: String(repeating: " ", count: separator))
            while joined.hasSuffix(" ") { joined.removeLast() }
            return joined
        }
    }

    static func lineCount(of node: ViewNode, width: Int) -> Int {
        let share = share(of: node, width: width)
        var count = 0
        for child in node.children { count = max(count, child.lineCount(width: share)) }
        return count
    }

    static func line(of target: ViewNode, in node: ViewNode, width: Int, limit: Int) -> Int? {
        let share = share(of: node, width: width)
        for child in node.children {
            if let inner = child.line(of: target, width: share, limit: limit) { return inner }
        }
        return nil
    }
}
