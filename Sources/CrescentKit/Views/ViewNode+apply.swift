import Model

extension ViewNode {
    /// Applies a collection's change set to a table or list: deleted rows go, inserted and
    /// updated ones come from the change set (or from `items`, the list after the change, for a
    /// change set that does not carry them); only those rows render again.
    func apply(_ changes: Value, items: Value) throws(ViewError) {
        guard let key = kind.rowsField else { throw ViewError("view.\(kind.name):apply(change[, items]) is for tables and lists") }
        let newItems: [Value]?
        switch items {
        case .null: newItems = nil
        case .array(let list): newItems = list
        default: throw ViewError("view.\(kind.name):apply: items must be the list after the change, got \(items.typeName)")
        }
        let edits: [ChangeSet.Edit]
        do {
            let change = try ChangeSet(value: changes)
            // A view that shows nothing yet starts from the whole list when it is given.
            if fields[key] == nil, !change.reload, let newItems {
                edits = [.reload(newItems)]
            } else {
                edits = try change.edits(count: fields[key]?.arrayValue?.count ?? 0, newItems: newItems)
            }
        } catch {
            throw ViewError("view.\(kind.name):apply: \(error.message)")
        }
        guard edits.contains(where: { if case .reload = $0 { false } else { true } }) else {
            for case .reload(let list) in edits {
                kind.rowsApplied(self, list, reloaded: true)
                try set(key, .array(list))
            }
            return
        }
        // The rows leave `fields` while they are edited, so the edits do not copy the whole list.
        var rows = fields[key]?.arrayValue ?? []
        fields[key] = nil
        defer { fields[key] = .array(rows) }
        for edit in edits {
            switch edit {
            case .reload(let list):
                kind.rowsApplied(self, list, reloaded: true)
                try set(key, .array(list))
                fields[key] = nil
                rows = list
            case .delete(let index):
                let gone = rows.remove(at: index)
                kind.rowEdited(self, at: index, from: gone, to: nil)
                noteRowChange(at: index, inserted: false, count: rows.count)
            case .insert(let index, let item):
                rows.insert(item, at: index)
                kind.rowEdited(self, at: index, from: nil, to: item)
                noteRowChange(at: index, inserted: true, count: rows.count)
            case .update(let index, let item):
                let previous = rows[index]
                rows[index] = item
                kind.rowEdited(self, at: index, from: previous, to: item)
            }
        }
        kind.rowsApplied(self, rows, reloaded: false)
        markDirty()
    }
}
