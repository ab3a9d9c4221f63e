import Model

/// What one kind of view component is (`view.text`, `view.table`, …): the one home of its
/// fields and their checks, what a bare value updates, its layout, and the input it takes (the
/// rows a selection moves over). A ``ViewNode`` holds the data; its kind says what the data
/// means. Adding a kind is a new type conforming to this protocol, listed in ``ViewKinds/all``.
///
/// Kinds have no state: the requirements are static, and a node's kind is its metatype.
protocol ViewKind {
    /// The name in Lua (`view.<name>`) and in messages.
    static var name: String { get }

    // MARK: Update and validation

    /// The fields a script may set.
    static var fields: [String] { get }
    /// Fields a constructor sets before the others (a table's columns before its rows).
    static var firstFields: [String] { get }
    /// The field that `node:update(value)` sets for a value that is not a table of fields, or
    /// nil when this kind cannot show such a value.
    static func updateField(for value: Value) -> String?
    /// The fields of `view.<name>(value)` with a value that is not a table of fields, or nil
    /// when the constructor needs a table (whatever the value: the constructor asks with null
    /// before it converts the value).
    static func constructorFields(bare value: Value) -> Fields?
    /// What a component made with `fields` and `id` lacks to ever show anything, as the
    /// constructor's error (`view.table {}`: no columns and no rows to take them from); nil
    /// when nothing is missing.
    static func constructorProblem(_ fields: Fields, id: String?) -> String?
    /// Whether the constructor's positional entries are the component's items
    /// (`view.list { "a", "b" }`) rather than child components.
    static var takesPositionalItems: Bool { get }
    /// Whether it holds other components (`view.stack { a, b }`).
    static var holdsChildren: Bool { get }
    /// The field the constructor's `file` is read into (a template's `source`), or nil.
    static var fileField: String? { get }
    /// Checks `value` for `key` beyond its type, before it is stored (a template's source must
    /// parse).
    static func willSet(_ key: String, _ value: Value, on node: ViewNode) throws(ViewError)
    /// Reacts to `key` just stored (a table reads its rows into cells).
    static func didSet(_ key: String, on node: ViewNode)

    // MARK: Layout

    /// The first `limit` lines of `node` at `width`.
    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String]
    /// How many lines `node` has at `width`, without laying out more than needed.
    static func lineCount(of node: ViewNode, width: Int) -> Int
    /// Where `target`'s first line is among `node`'s first `limit` lines, for a component that
    /// lays out others; nil when it is not shown there.
    static func line(of target: ViewNode, in node: ViewNode, width: Int, limit: Int) -> Int?

    // MARK: Input

    /// The field holding the rows a selection moves over (`selectable = true`), or nil when
    /// the kind keeps no selection.
    static var rowsField: String? { get }
    /// How many rows a selection moves over.
    static func rowCount(of node: ViewNode) -> Int
    /// The lines above the first row (a table's titles and rule).
    static func headerLines(of node: ViewNode) -> Int
    /// `node:set(row, key, value)`: one cell changed.
    static func setCell(_ node: ViewNode, row: Int, key: String, value: Value) throws(ViewError)
    /// `node:apply(...)` edited the rows: a row came at `index` (`item`), went (`item` nil), or
    /// changed (`previous` and `item`).
    static func rowEdited(_ node: ViewNode, at index: Int, from previous: Value?, to item: Value?)
    /// `node:apply(...)` replaced the rows whole with `rows` (a reload), or finished its edits.
    static func rowsApplied(_ node: ViewNode, _ rows: [Value], reloaded: Bool)
}

extension ViewKind {
    static var firstFields: [String] { [] }
    static func updateField(for value: Value) -> String? { nil }
    static func constructorFields(bare value: Value) -> Fields? { nil }
    static func constructorProblem(_ fields: Fields, id: String?) -> String? { nil }
    static var takesPositionalItems: Bool { false }
    static var holdsChildren: Bool { false }
    static var fileField: String? { nil }
    static func willSet(_ key: String, _ value: Value, on node: ViewNode) throws(ViewError) {}
    static func didSet(_ key: String, on node: ViewNode) {}

    static func lineCount(of node: ViewNode, width: Int) -> Int { node.lines(width: width).count }
    static func line(of target: ViewNode, in node: ViewNode, width: Int, limit: Int) -> Int? { nil }

    static var rowsField: String? { nil }
    static func rowCount(of node: ViewNode) -> Int {
        rowsField.flatMap { node.fields[$0]?.arrayValue?.count } ?? 0
    }
    static func headerLines(of node: ViewNode) -> Int { 0 }
    static func setCell(_ node: ViewNode, row: Int, key: String, value: Value) throws(ViewError) {
        throw ViewError("view.\(name):set(row, key, value) is for tables; assign fields instead")
    }
    static func rowEdited(_ node: ViewNode, at index: Int, from previous: Value?, to item: Value?) {}
    static func rowsApplied(_ node: ViewNode, _ rows: [Value], reloaded: Bool) {}

    /// `lines` cut to `limit`: for kinds laid out whole.
    static func cut(_ lines: [String], to limit: Int) -> [String] {
        lines.count > limit ? Array(lines.prefix(limit)) : lines
    }
}

/// The view kinds there are, as `view.<name>` offers them.
enum ViewKinds {
    /// Computed: a stored array of metatypes would be a global Swift 6 cannot prove is not shared
    /// mutable state (it is read when `view` is installed and to list the names in an error).
    static var all: [any ViewKind.Type] {
        [
            TextKind.self, ListKind.self, TableKind.self, KeyValueKind.self, ProgressKind.self,
            StackKind.self, RowKind.self, SlotKind.self, TemplateKind.self,
        ]
    }
}
