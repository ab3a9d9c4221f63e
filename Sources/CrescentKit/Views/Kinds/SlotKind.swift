/// `view.slot`: where a child controller's view shows (``ViewNode/setContent(_:)``).
enum SlotKind: ViewKind {
    static let name = "slot"
    static let fields: [String] = []

    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String] {
        node.content?.lines(width: width, limit: limit) ?? []
    }

    static func lineCount(of node: ViewNode, width: Int) -> Int {
        node.content?.lineCount(width: width) ?? 0
    }
}
