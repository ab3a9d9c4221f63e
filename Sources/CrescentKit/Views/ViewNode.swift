import Model
import Mustache

/// One component of a text view (`view.text`, `view.table`, …): its data, its children, and its
/// rendered lines, cached until the data changes.
///
/// Changing a node (``update(_:)``, ``set(_:_:)``) marks it and its ancestors dirty and tells the
/// presenter, which renders once at the end of the loop turn.
final class ViewNode {
    /// What the component is (``TextKind``, ``TableKind``, …): its fields, layout and input.
    let kind: any ViewKind.Type
    let id: String?
    /// The component's data as scripts set it (for `json` output and for reading fields back).
    var fields: Fields = [:]
    private(set) var children: [ViewNode] = []
    /// What a slot shows (a child controller's view), or nil.
    private(set) var content: ViewNode?
    weak var parent: ViewNode?
    /// Called when the root of a presented tree changes.
    var onDirty: (() -> Void)?

    // Table state, kept ready for incremental rendering.
    var columns: [TableColumn] = []
    var cells: [[String]] = []
    /// Each row laid out, with the indent of a selectable table's pointer column in front.
    var rowLines: [String?] = []
    /// The indent the rows in `rowLines` have.
    var rowLinesIndent = ""
    /// The header as last laid out, with what it was laid out from.
    var headerCache: TableHeader?
    var naturalWidths: [Int] = []
    /// How many cells of each column have its natural width (a column shrinks when none is left).
    var widestCounts: [Int] = []
    var fittedWidths: [Int] = []
    var template: MustacheTemplate?
    var templateError: String?
    /// The file a template's source was read from (`view.template { file = ... }`), which its
    /// parse errors name; nil for a source given inline.
    var templateFile: String?
    /// The variables of a template already warned about as absent from its data, so that each
    /// is said once per component, not at every update.
    var warnedTemplateVariables: Set<String> = []
    /// A selectable list's or table's selection; nil when it is not selectable.
    var selection: Selection?
    /// On a tree's root: the selectable component that keys move (tab changes it).
    weak var focus: ViewNode?

    private var cachedLines: [String]?
    private var cachedWidth = -1
    private var cachedLimit = Int.max

    init(kind: any ViewKind.Type, id: String?) {
        self.kind = kind
        self.id = id
    }

    // MARK: Tree

    func append(_ child: ViewNode) {
        child.parent = self
        children.append(child)
    }

    /// Puts `node` (a child controller's view) in this slot, or empties it.
    func setContent(_ node: ViewNode?) {
        content?.parent = nil
        content = node
        node?.parent = self
        markDirty()
    }

    /// The node with `id` in this tree, not looking inside slots (they belong to child controllers).
    func find(_ id: String) -> ViewNode? {
        if self.id == id { return self }
        for child in children {
            if let found = child.find(id) { return found }
        }
        return nil
    }

    // MARK: Changes

    /// Invalidates the cached rendering here and above, and tells the presenter.
    func markDirty() {
        var node: ViewNode? = self
        while let current = node {
            current.cachedLines = nil
            if current.parent == nil { current.onDirty?() }
            node = current.parent
        }
    }

    /// Replaces the component's data: a string for `text`, an array for `list`/`table`, a number
    /// for `progress`, a record for `keyvalue` (as its kind says); or a table of fields for any
    /// of them.
    func update(_ value: Value) throws(ViewError) {
        if let key = kind.updateField(for: value) { return try set(key, value) }
        guard case .object(let fields) = value else {
            throw ViewError("view.\(kind.name):update: cannot show \(value.typeName) in a \(kind.name): give a table of its fields "
                            + "(fields: \(kind.fields.joined(separator: ", ")))")
        }
        let sorted = fields.sorted(by: { $0.key < $1.key }).filter { $0.key != "id" }
        for (key, item) in sorted { try validate(key, item) }   // all or nothing
        for (key, item) in sorted { try set(key, item) }
    }

    /// Sets one field (`node.text = "hello"` in Lua); nil removes it.
    func set(_ key: String, _ value: Value) throws(ViewError) {
        try validate(key, value)
        try kind.willSet(key, value, on: self)
        if value.isNull { fields.removeValue(forKey: key) } else { fields[key] = value }
        kind.didSet(key, on: self)
        if key == kind.rowsField { clampSelection() }
        markDirty()
    }

    /// What each field holds, for the error a wrong type gets.
    private static func expected(_ key: String) -> (String, (Value) -> Bool)? {
        let isText: (Value) -> Bool = { value in
            switch value {
            case .string, .integer, .number, .bool: true
            default: false
            }
        }
        let isList: (Value) -> Bool = { $0.arrayValue != nil || $0 == .object([:]) }
        return switch key {
        case "text", "label": ("a string or a number", isText)
        case "items", "rows", "columns": ("a list", isList)
        case "value", "total": ("a number", { $0.doubleValue != nil })
        case "gap": ("a whole number", { $0.integerValue.map { $0 >= 0 } ?? false })
        case "marker", "style", "source": ("a string", { $0.stringValue != nil })
        case "header", "selectable": ("a boolean", { $0.boolValue != nil })
        case "pairs": ("a record or a list of {key, value} pairs", { value in
            switch value {
            case .object, .model, .array: true
            default: false
            }
        })
        default: nil
        }
    }

    /// The ids of the components in this tree, in order (not looking inside slots).
    var ids: [String] {
        (id.map { [$0] } ?? []) + children.flatMap(\.ids)
    }

    private func validate(_ key: String, _ value: Value) throws(ViewError) {
        let allowed = kind.fields
        guard allowed.contains(key) else {
            throw ViewError("view.\(kind.name): no field '\(key)' (\(NameSuggestion.listing("fields", allowed, suggesting: NameSuggestion.closest(to: key, among: allowed))))")
        }
        if !value.isNull, let (expected, accepts) = Self.expected(key), !accepts(value) {
            throw ViewError("view.\(kind.name): field '\(key)' must be \(expected), got \(value.typeName)")
        }
    }

    /// The cached lines at `width`, rendering them when needed: the first `limit` of them. Tables,
    /// stacks, rows and slots lay out only those, so `live` mode, which shows what fits on the
    /// screen, pays for a long table's visible rows and not for the rest.
    func lines(width: Int, limit: Int = .max) -> [String] {
        // A cache made with a smaller limit serves when it was not cut short (it holds them all).
        if let cachedLines, cachedWidth == width, limit <= cachedLimit || cachedLines.count < cachedLimit {
            return cachedLines.count > limit ? Array(cachedLines.prefix(limit)) : cachedLines
        }
        let rendered = render(width: max(width, 1), limit: max(limit, 0))
        cachedLines = rendered
        cachedWidth = width
        cachedLimit = limit
        return rendered
    }
}

/// A mistake in how a script uses a view component; raised at the call site.
struct ViewError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
