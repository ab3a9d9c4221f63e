import Model

/// The selected row of a `selectable = true` list or table, and the first row shown.
///
/// The selection is an index that follows its item: rows inserted or removed above it move it
/// (``ViewNode/apply(_:items:)``). The first row shown is settled when the component is laid out
/// with a line limit (the live screen), so the selected row is always on screen; without a limit
/// (plain output) every row shows.
struct Selection: Equatable {
    /// The selected row, from 0; nil when there are no rows.
    var index: Int?
    /// The first row shown.
    var offset = 0
    /// How many rows the last layout showed (pageup and pagedown move by that much).
    var visibleRows = 0
    /// The selected row was removed, so another item is selected now: the controller's
    /// `selectionChanged` is told (by the `apply` that removed it), then this is cleared.
    var lostItsRow = false
}

/// How a key moves a selection.
enum SelectionMove {
    case up, down, pageUp, pageDown, home, end

    /// The move a key makes (`k` and `j` as in vi), or nil for other keys.
    init?(key: String) {
        switch key {
        case "up", "k": self = .up
        case "down", "j": self = .down
        case "pageup": self = .pageUp
        case "pagedown": self = .pageDown
        case "home": self = .home
        case "end": self = .end
        default: return nil
        }
    }
}

extension ViewNode {
    /// Whether the component keeps a selected row.
    var isSelectable: Bool { selection != nil }

    /// The rows a selection moves over: a list's items, a table's rows.
    var rowCount: Int { kind.rowCount(of: self) }

    /// The item at `index`: a list's item or a table's row record.
    func item(at index: Int) -> Value {
        let rows = kind.rowsField.flatMap { fields[$0]?.arrayValue } ?? []
        return rows.indices.contains(index) ? rows[index] : .null
    }

    /// Turns the selection on (the first row selected) or off, as `selectable` says.
    func configureSelection() {
        let on = fields["selectable"]?.boolValue == true
        if on && selection == nil {
            selection = Selection(index: rowCount > 0 ? 0 : nil)
        } else if !on {
            selection = nil
        }
    }

    /// Selects row `index` (from 0), clamped to the rows; false when nothing changed.
    @discardableResult
    func select(_ index: Int) -> Bool {
        guard var selection else { return false }
        let count = rowCount
        let target: Int? = count == 0 ? nil : min(max(index, 0), count - 1)
        guard target != selection.index else { return false }
        selection.index = target
        self.selection = selection
        markDirty()
        return true
    }

    /// Moves the selection; false when it did not move (at an end, or no rows).
    func move(_ move: SelectionMove) -> Bool {
        guard let selection else { return false }
        let current = selection.index ?? 0
        let page = max(selection.visibleRows - 1, 1)
        return switch move {
        case .up: select(current - 1)
        case .down: select(current + 1)
        case .pageUp: select(current - page)
        case .pageDown: select(current + page)
        case .home: select(0)
        case .end: select(rowCount - 1)
        }
    }

    /// Keeps the selection on its item as rows come and go: `row` was inserted (or, with
    /// `inserted` false, removed). A removed selected row leaves the row that took its place
    /// selected. `count` is the number of rows after the change.
    func noteRowChange(at row: Int, inserted: Bool, count: Int) {
        guard var selection else { return }
        if let index = selection.index {
            if !inserted, row == index { selection.lostItsRow = true }
            if inserted, row <= index { selection.index = index + 1 }
            if !inserted, row < index { selection.index = index - 1 }
            if let moved = selection.index, moved >= count { selection.index = count > 0 ? count - 1 : nil }
        } else if count > 0 {
            selection.index = 0
        }
        // Rows above the screen's first row move it too, so what is shown stays in place.
        if row < selection.offset { selection.offset = max(selection.offset + (inserted ? 1 : -1), 0) }
        self.selection = selection
    }

    /// After the rows were replaced whole: the selection stays at its index, within the rows.
    func clampSelection() {
        guard var selection else { return }
        let count = rowCount
        selection.index = count == 0 ? nil : min(selection.index ?? 0, count - 1)
        self.selection = selection
    }

    /// The first row to show in `rows` lines: the selection on screen, no blank rows past the
    /// end. Remembers `rows` for pageup/pagedown.
    func firstShownRow(rows: Int) -> Int {
        guard var selection else { return 0 }
        let count = rowCount
        let visible = max(rows, 1)
        var offset = min(selection.offset, max(count - visible, 0))
        if let index = selection.index {
            if index < offset { offset = index }
            if index >= offset + visible { offset = index - visible + 1 }
        }
        selection.offset = offset
        selection.visibleRows = visible
        self.selection = selection
        return offset
    }

    /// The selectable components of this tree, in the order they show (not inside slots: those
    /// are child controllers' views).
    var selectables: [ViewNode] {
        var found: [ViewNode] = isSelectable ? [self] : []
        for child in children { found += child.selectables }
        return found
    }

    /// The component keys move: the one focused last (tab), else the first selectable one.
    var focusedSelectable: ViewNode? {
        if let focus, focus.isSelectable, focus.root === self { return focus }
        return selectables.first
    }

    /// The top of this node's tree.
    var root: ViewNode {
        var node = self
        while let parent = node.parent { node = parent }
        return node
    }

    /// Moves the focus to the next (or previous) selectable component; false when there is no
    /// other.
    func cycleFocus(backwards: Bool) -> Bool {
        let all = selectables
        guard all.count > 1, let current = focusedSelectable, let position = all.firstIndex(where: { $0 === current }) else { return false }
        let next = all[(position + (backwards ? all.count - 1 : 1)) % all.count]
        focus = next
        current.markDirty()
        next.markDirty()
        return true
    }

    /// The line of the focused component's selected row among this tree's first `limit` lines
    /// at `width` (laid out already), or nil when it is not among them. The screen shows that
    /// line in reverse video.
    func selectedLine(width: Int, limit: Int) -> Int? {
        guard let focused = focusedSelectable, let index = focused.selection?.index, let start = line(of: focused, width: width, limit: limit) else { return nil }
        let header = focused.kind.headerLines(of: focused)
        let line = start + header + index - (focused.selection?.offset ?? 0)
        return line >= start + header && line < limit ? line : nil
    }

    /// The selectable component and its row shown at `target`, one of this tree's first `limit`
    /// lines at `width` (a click there selects it), or nil when no row is there.
    func selectableRow(atLine target: Int, width: Int, limit: Int) -> (ViewNode, Int)? {
        for node in selectables {
            guard let start = line(of: node, width: width, limit: limit), let selection = node.selection else { continue }
            let header = node.kind.headerLines(of: node)
            let first = node.rowCount > selection.visibleRows ? selection.offset : 0
            let index = first + target - start - header
            if target >= start + header, index < node.rowCount, selection.visibleRows == 0 || index < first + selection.visibleRows {
                return (node, index)
            }
        }
        return nil
    }

    /// Where `node`'s first line is among this tree's first `limit` lines, as the kinds that lay
    /// out others (stacks, rows) place it; nil when it is not shown.
    func line(of node: ViewNode, width: Int, limit: Int) -> Int? {
        node === self ? 0 : kind.line(of: node, in: self, width: width, limit: limit)
    }
}
