import Model

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
            throw ViewError("view.table.set: no column '\(key)' (columns: \(columns.map(\.key).joined(separator: ", ")))")
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
        let previous = DisplayWidth.of(cells[row][column])
        cells[row][column] = text
        if naturalWidths.indices.contains(column) && columns[column].width == nil {
            let natural = naturalWidths[column]
            let width = DisplayWidth.of(text)
            if width > natural {
                naturalWidths = []                  // the column grows
            } else if previous == natural && width < natural {
                widestCounts[column] -= 1
                if widestCounts[column] == 0 { naturalWidths = [] }   // it may shrink
            } else if width == natural && previous < natural {
                widestCounts[column] += 1
            }
        }
        if columns[column].explicitRight == nil && (value.doubleValue != nil) != columns[column].alignRight {
            naturalWidths = []   // the automatic alignment may change
        }
        rowLines[row] = nil
        markDirty()
    }

    func tableLines(width: Int) -> [String] {
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
        let fitted = fit(naturalWidths, into: width)
        if fitted != fittedWidths {
            fittedWidths = fitted
            rowLines = Array(repeating: nil, count: cells.count)
        }
        var lines: [String] = []
        lines.reserveCapacity(cells.count + 2)
        if fields["header"]?.boolValue != false {
            lines.append(line(columns.map(\.title), alignRight: columns.map(\.alignRight)))
            lines.append(fittedWidths.map { String(repeating: "─", count: $0) }.joined(separator: "  "))
        }
        let alignments = columns.map(\.alignRight)
        for index in cells.indices {
            if let cached = rowLines[index] {
                lines.append(cached)
            } else {
                let rendered = line(cells[index], alignRight: alignments)
                rowLines[index] = rendered
                lines.append(rendered)
            }
        }
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
    /// Applies a collection's change set to a table or list: deleted rows go, inserted and
    /// updated ones come from the change set's own records (`insertedRecords`,
    /// `updatedRecords`), else from `items` (the list after the change); only those rows render.
    func apply(_ changes: Value, items: Value) throws(ViewError) {
        guard kind == .table || kind == .list else { throw ViewError("view.\(kind):apply(changes, items) is for tables and lists") }
        guard let newItems = items.arrayValue ?? (items.isNull ? [] : nil) else {
            throw ViewError("view.\(kind):apply: items must be the list after the change")
        }
        let key = kind == .table ? "rows" : "items"
        if kind == .table && columns.isEmpty, case .object(let first)? = newItems.first {
            columns = first.keys.sorted().compactMap { TableColumn(.string($0)) }
        }
        if changes["reload"].boolValue == true || fields[key] == nil {
            try set(key, items)
            return
        }
        var rows = fields[key]?.arrayValue ?? []
        let positions = { (name: String) in (changes[name].arrayValue ?? []).compactMap { $0.integerValue }.map { Int($0) - 1 } }
        for index in positions("deleted").sorted(by: >) where rows.indices.contains(index) {
            rows.remove(at: index)
            if kind == .table { cells.remove(at: index); rowLines.remove(at: index) }
        }
        // The record at each position: the change set's own when it carries them (exact for
        // this change), else the one in `items`.
        func records(_ name: String) -> [(index: Int, record: Value)] {
            let indexes = positions(name)
            if let carried = changes[name + "Records"].arrayValue, carried.count == indexes.count {
                return Array(zip(indexes, carried)).map { (index: $0.0, record: $0.1) }
            }
            return indexes.compactMap { newItems.indices.contains($0) ? (index: $0, record: newItems[$0]) : nil }
        }
        for (index, record) in records("inserted").sorted(by: { $0.index < $1.index }) where index >= 0 && index <= rows.count {
            rows.insert(record, at: index)
            if kind == .table { cells.insert(cellStrings(record), at: index); rowLines.insert(nil, at: index) }
        }
        for (index, record) in records("updated") where rows.indices.contains(index) {
            rows[index] = record
            if kind == .table { cells[index] = cellStrings(record); rowLines[index] = nil }
        }
        fields[key] = .array(rows)
        if kind == .table { naturalWidths = [] }
        markDirty()
    }
}
