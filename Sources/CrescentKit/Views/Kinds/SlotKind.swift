import Model

/// `view.slot`: where a child controller's view shows (``ViewNode/setContent(_:)``).
enum SlotKind: ViewKind {
    static let name = "slot"
    static let fields: [String] = []

    /// A child's view is shown in a slot named by its id (`self:addChild(Child, "detail")`): one
    /// without an id stays empty.
    static func constructorProblem(_ fields: Fields, id: String?) -> String? {
        id == nil ? "give it an id (view.slot { id = \"detail\" }): self:addChild(Child, \"detail\") shows the child's view in the slot with that id" : nil
    }

    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String] {
        node.content?.lines(width: width, limit: limit) ?? []
    }

    static func lineCount(of node: ViewNode, width: Int) -> Int {
        node.content?.lineCount(width: width) ?? 0
    }
}
