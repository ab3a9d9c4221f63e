import Model

/// `view.table`: rows under column titles and a rule, laid out incrementally: each row's cells
/// are kept as strings and its line until it changes, the columns' natural widths are kept up
/// to date cell by cell, and only the rows on screen are laid out. With `selectable = true` the
/// selected row is marked `>`.
enum TableKind: ViewKind {
    static let name = "table"
    static let fields = ["columns", "rows", "header", "selectable"]
    static let firstFields = ["columns"]
    static let rowsField: String? = "rows"

    /// Without `columns` the columns are the keys of the first row: with no rows either, the
    /// table would show nothing, not even its titles (rows given later, even `rows = {}`, are
    /// the script's choice).
    static func constructorProblem(_ fields: Fields, id: String?) -> String? {
        guard fields["columns"] == nil, fields["rows"] == nil else { return nil }
        return "give its columns (columns = { \"name\", \"qty\" }) or its rows (the keys of the first row become the columns); "
            + "with neither it shows nothing"
    }

    static func updateField(for value: Value) -> String? {
        if case .array = value { "rows" } else { nil }
    }

    /// A column that is no column, or a row whose keys miss the columns (a misspelled
    /// `{ itme = "x" }` under column `item` showed an empty cell), is an error where it is set.
    static func willSet(_ key: String, _ value: Value, on node: ViewNode) throws(ViewError) {
        switch key {
        case "columns":
            for (index, column) in (value.arrayValue ?? []).enumerated() {
                if let problem = TableColumn.problem(column, at: index + 1) { throw ViewError(problem) }
            }
        case "rows":
            guard let rows = value.arrayValue else { return }
            if !node.columns.isEmpty {
                let keys = node.columns.map(\.key)
                for (index, row) in rows.enumerated() {
                    if let problem = rowProblem(row, keys: keys) { throw ViewError("view.table: row \(index + 1) \(problem)") }
                }
            } else if node.fields["columns"] == nil, case .object(let first)? = rows.first {
                // Without `columns` the first row's keys become the columns: the other rows are
                // held to them as to declared ones, or a misspelled row showed as a blank line.
                let keys = first.keys.sorted()
                for (index, row) in rows.enumerated().dropFirst() {
                    if let problem = rowProblem(row, keys: keys) {
                        throw ViewError("view.table: row \(index + 1) \(problem) (without `columns` the columns are row 1's keys: "
                                        + "give `columns` to choose them)")
                    }
                }
            }
        default: break
        }
    }

    /// Why a row (a record) shows wrong under columns `keys`: a key that is a column's misspelled
    /// (the row lacks that column), or no key of any column at all; nil when neither. Other
    /// keys are the row's own data (an id) and stay free.
    static func rowProblem(_ row: Value, keys: [String]) -> String? {
        guard case .object(let fields) = row, !fields.isEmpty else { return nil }
        let missing = keys.filter { fields[$0] == nil }
        guard !missing.isEmpty else { return nil }
        for key in fields.keys.sorted() where !keys.contains(key) {
            if let closest = NameSuggestion.closest(to: key, among: missing, prefixes: false) {
                return "has '\(key)', which no column shows (columns: \(keys.joined(separator: ", "))); did you mean '\(closest)'?"
            }
        }
        guard missing.count == keys.count else { return nil }
        return "has none of the columns' keys (row: \(fields.keys.sorted().joined(separator: ", ")); columns: "
            + "\(keys.joined(separator: ", "))): a row is a table keyed by its columns' keys"
    }

    static func didSet(_ key: String, on node: ViewNode) {
        switch key {
        case "columns": node.configureColumns()
        case "rows": node.loadRows()
        case "selectable": node.configureSelection()
        default: break
        }
    }

    static func render(_ node: ViewNode, width: Int, limit: Int) -> [String] {
        node.tableLines(width: width, limit: limit)
    }

    static func lineCount(of node: ViewNode, width: Int) -> Int {
        guard !node.columns.isEmpty else { return node.cells.isEmpty ? 0 : 1 }
        return (node.showsHeader ? 2 : 0) + node.cells.count
    }

    static func rowCount(of node: ViewNode) -> Int { node.cells.count }

    static func headerLines(of node: ViewNode) -> Int {
        node.showsHeader && !node.columns.isEmpty ? 2 : 0
    }

    static func setCell(_ node: ViewNode, row: Int, key: String, value: Value) throws(ViewError) {
        try node.setCell(row: row, key: key, value: value)
    }

    static func rowEdited(_ node: ViewNode, at index: Int, from previous: Value?, to item: Value?) {
        node.editRow(at: index, from: previous, to: item)
    }

    static func rowsApplied(_ node: ViewNode, _ rows: [Value], reloaded: Bool) {
        guard node.columns.isEmpty else { return }
        node.deriveColumns(from: rows)
        if !reloaded { node.naturalWidths = [] }
    }
}

extension ViewNode {
    /// Reads `columns` (names or `{ key, title, align, width }`); without them the columns are
    /// the keys of the first row.
    func configureColumns() {
        columns = (fields["columns"]?.arrayValue ?? []).compactMap(TableColumn.init)
        loadRows()
    }

    /// Converts every row to cell strings and forgets the rendered rows.
    func loadRows() {
        let rows = fields["rows"]?.arrayValue ?? []
        if columns.isEmpty, case .object(let first)? = rows.first {
            columns = first.keys.sorted().map { TableColumn(.string($0)) }.compactMap { $0 }
        }
        cells = rows.map(cellStrings)
        rowLines = Array(repeating: nil, count: cells.count)
        naturalWidths = []
    }

    /// Explicit alignments as given; otherwise numbers read best right-aligned.
    private func updateAlignment() {
        let rows = fields["rows"]?.arrayValue ?? []
        for index in columns.indices {
            let automatic = !rows.isEmpty && rows.allSatisfy { cell(of: $0, at: index).doubleValue != nil }
            let alignment = columns[index].explicitRight ?? automatic
            if alignment != columns[index].alignRight {
                columns[index].alignRight = alignment
                rowLines = Array(repeating: nil, count: cells.count)
            }
        }
    }

    /// Changes one cell (`tbl:set(row, key, value)`): only that row is rendered again unless the
    /// column must get wider.
    func setCell(row: Int, key: String, value: Value) throws(ViewError) {
        guard cells.indices.contains(row) else { throw ViewError("view.table.set: row \(row + 1) does not exist (rows: \(cells.count))") }
        guard let column = columns.firstIndex(where: { $0.key == key }) else {
            let keys = columns.map(\.key)
            throw ViewError("view.table.set: no column '\(key)' (" + NameSuggestion.listing("columns", keys, suggesting: NameSuggestion.closest(to: key, among: keys)) + ")")
        }
        if case .array(var rows)? = fields["rows"], rows.indices.contains(row) {
            if case .object(var record) = rows[row] {
                record[key] = value
                rows[row] = .object(record)
            } else if case .array(var items) = rows[row], items.indices.contains(column) {
                items[column] = value
                rows[row] = .array(items)
            }
            fields["rows"] = .array(rows)
        }
        let text = Self.text(value)
        let previous = cells[row][column]
        cells[row][column] = text
        noteCellChange(column: column, from: previous, to: text, value: value)
        rowLines[row] = nil
        markDirty()
    }

    /// Keeps the natural widths (and how many cells hold each) right as one cell goes from
    /// `previous` to `text` (either nil for a row that comes or goes), without measuring the
    /// other rows; when a column may shrink or change alignment, they are measured again.
    private func noteCellChange(column: Int, from previous: String?, to text: String?, value: Value?) {
        if naturalWidths.indices.contains(column) && columns[column].width == nil {
            let natural = naturalWidths[column]
            let old = previous.map(DisplayWidth.of) ?? -1
            let width = text.map(DisplayWidth.of) ?? -1
            if width > natural {
                naturalWidths[column] = width       // the column grows
                widestCounts[column] = 1
            } else if old == natural && width < natural {
                widestCounts[column] -= 1
                if widestCounts[column] == 0 { naturalWidths = [] }   // it may shrink
            } else if width == natural && old < natural {
                widestCounts[column] += 1
            }
        }
        guard columns.indices.contains(column), columns[column].explicitRight == nil else { return }
        // Automatic alignment is right when every cell is a number: a new cell can only break
        // that; a cell that goes may make it true again.
        if let value, (value.doubleValue != nil) != columns[column].alignRight, text != nil || !columns[column].alignRight {
            naturalWidths = []
        } else if text == nil, !columns[column].alignRight {
            naturalWidths = []
        }
    }

    /// A row of cells comes (`added`) or goes: the widths follow it.
    private func noteRow(_ rowCells: [String], _ row: Value, added: Bool) {
        for column in columns.indices where column < rowCells.count {
            let cellValue = cell(of: row, at: column)
            noteCellChange(column: column, from: added ? nil : rowCells[column], to: added ? rowCells[column] : nil,
                           value: added ? cellValue : nil)
        }
    }

    /// Whether the table shows its titles and rule above the rows (`header = false` hides them).
    var showsHeader: Bool { fields["header"]?.boolValue != false }

    /// The table's first `limit` lines at `width`: the rows past them are not laid out, and a row
    /// laid out before is reused until it changes.
    func tableLines(width: Int, limit: Int) -> [String] {
        guard !columns.isEmpty else { return cells.isEmpty ? [] : [DisplayWidth.truncate("(table without columns)", to: width)] }
        if naturalWidths.count != columns.count {
            updateAlignment()
            naturalWidths = columns.indices.map { index in
                if let fixed = columns[index].width { return fixed }
                let widest = cells.reduce(0) { max($0, DisplayWidth.of($1[index])) }
                return max(widest, DisplayWidth.of(columns[index].title))
            }
            widestCounts = columns.indices.map { index in
                let natural = naturalWidths[index]
                // The title holds the width too, so a column never shrinks below it.
                let titleHolds = DisplayWidth.of(columns[index].title) == natural ? 1 : 0
                return titleHolds + cells.reduce(0) { $0 + (DisplayWidth.of($1[index]) == natural ? 1 : 0) }
            }
        }
        // A selectable table gives two columns to the `>` that marks the selected row.
        let pointer = selection != nil ? 2 : 0
        let fitted = fit(naturalWidths, into: max(width - pointer, 1))
        let indent = pointer > 0 ? "  " : ""
        // The rows are kept with their indent: a selection move lays out the screenful again
        // (its `>` moved), and copying each row into a new string to indent it was a tenth of
        // a key's frame.
        if fitted != fittedWidths || rowLinesIndent != indent {
            fittedWidths = fitted
            rowLinesIndent = indent
            rowLines = Array(repeating: nil, count: cells.count)
        }
        var lines: [String] = []
        lines.reserveCapacity(min(cells.count + 2, limit))
        if showsHeader {
            lines += header(indent: indent)
            if lines.count > limit { lines.removeLast(lines.count - limit) }
        }
        let alignments = columns.map(\.alignRight)
        let room = limit - lines.count
        let first = selection != nil && cells.count > room ? firstShownRow(rows: room) : 0
        let selected = selection?.index
        for index in cells.indices.dropFirst(first) {
            guard lines.count < limit else { break }
            let rendered: String
            if let cached = rowLines[index] {
                rendered = cached
            } else {
                rendered = indent + line(cells[index], alignRight: alignments)
                rowLines[index] = rendered
            }
            lines.append(pointer > 0 && index == selected ? "> " + rendered.dropFirst(2) : rendered)
        }
        return lines
    }

    /// The title line and the rule under it, laid out again only when a title, an alignment or
    /// a width changed (each frame of a selection move asked for them).
    private func header(indent: String) -> [String] {
        let titles = columns.map(\.title), alignments = columns.map(\.alignRight)
        if let cached = headerCache, cached.titles == titles, cached.alignments == alignments, cached.widths == fittedWidths,
           cached.indent == indent {
            return cached.lines
        }
        let lines = [indent + line(titles, alignRight: alignments),
                     indent + fittedWidths.map { String(repeating: "─", count: $0) }.joined(separator: "  ")]
        headerCache = TableHeader(titles: titles, alignments: alignments, widths: fittedWidths, indent: indent, lines: lines)
        return lines
    }

    private func line(_ texts: [String], alignRight: [Bool]) -> String {
        var parts: [String] = []
        parts.reserveCapacity(texts.count)
        for (index, text) in texts.enumerated() {
            let isLast = index == texts.count - 1
            let fitted = DisplayWidth.fit(text, to: fittedWidths[index], alignRight: alignRight[index])
            parts.append(isLast && !alignRight[index] ? DisplayWidth.truncate(text, to: fittedWidths[index]) : fitted)
        }
        var joined = parts.joined(separator: "  ")
        while joined.last == " " { joined.removeLast() }
        return joined
    }

    /// Shrinks the widest columns until everything fits in `width` with two-space gaps.
    private func fit(_ natural: [Int], into width: Int) -> [Int] {
        var widths = natural
        let available = width - 2 * (widths.count - 1)
        while widths.reduce(0, +) > available, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > 1 {
            widths[widest] -= 1
        }
        return widths
    }

    func cellStrings(_ row: Value) -> [String] {
        columns.indices.map { Self.text(cell(of: row, at: $0)) }
    }

    private func cell(of row: Value, at column: Int) -> Value {
        if case .array(let items) = row { return column < items.count ? items[column] : .null }
        return row[columns[column].key]
    }
}

extension ViewNode {
    /// One row of a table edited by `apply`: came at `index` (`item`), went (`item` nil), or
    /// changed from `previous` to `item`; its cells and widths follow, only it renders again.
    func editRow(at index: Int, from previous: Value?, to item: Value?) {
        switch (previous, item) {
        case (let gone?, nil):
            noteRow(cells.remove(at: index), gone, added: false)
            rowLines.remove(at: index)
        case (nil, let item?):
            let rowCells = cellStrings(item)
            cells.insert(rowCells, at: index)
            rowLines.insert(nil, at: index)
            noteRow(rowCells, item, added: true)
        case (let previous?, let item?):
            noteRow(cells[index], previous, added: false)
            cells[index] = cellStrings(item)
            rowLines[index] = nil
            noteRow(cells[index], item, added: true)
        case (nil, nil):
            break
        }
    }

    /// A table given no columns shows the fields of its first row, sorted.
    func deriveColumns(from rows: [Value]) {
        guard columns.isEmpty, case .object(let first)? = rows.first else { return }
        columns = first.keys.sorted().compactMap { TableColumn(.string($0)) }
    }
}
