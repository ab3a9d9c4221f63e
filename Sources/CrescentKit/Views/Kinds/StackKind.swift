import Model

/// `view.stack`: children one under another, `gap` blank lines between them; an empty slot
/// takes no room, nor gaps.
enum StackKind: ViewKind {
    static let name = "stack"
    static let fields = ["gap"]
    static let holdsChildren = true

    /// The blank lines between the children (`gap`, checked to be 0 or more).
    static func gap(of node: ViewNode) -> Int { Int(node.fields["gap"]?.integerValue ?? 0) }

    /// The first `limit` lines: children past them are not laid out.
    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String] {
        let gap = gap(of: node)
        var lines: [String] = []
        for child in node.children where lines.count < limit {
            let room = limit - lines.count - (lines.isEmpty ? 0 : gap)
            let childLines = child.lines(width: width, limit: max(room, 1))
            if childLines.isEmpty { continue }
            if !lines.isEmpty { lines += Array(repeating: "", count: min(gap, limit - lines.count)) }
            lines += childLines.prefix(limit - lines.count)
        }
        return lines
    }

    static func lineCount(of node: ViewNode, width: Int) -> Int {
        let gap = gap(of: node)
        var count = 0
        for child in node.children {
            let childCount = child.lineCount(width: width)
            if childCount == 0 { continue }
            if count > 0 { count += gap }
            count += childCount
        }
        return count
    }

    static func line(of target: ViewNode, in node: ViewNode, width: Int, limit: Int) -> Int? {
        let gap = gap(of: node)
        var count = 0
        for child in node.children where count < limit {
            let room = limit - count - (count == 0 ? 0 : gap)
            let childLines = child.lines(width: width, limit: max(room, 1)).count
            if childLines == 0 { continue }
            if count > 0 { count += gap }
            if let inner = child.line(of: target, width: width, limit: max(room, 1)) { return count + inner }
            count += childLines
        }
        return nil
    }
}
