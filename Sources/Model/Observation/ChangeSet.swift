/// What changed in an observable collection, so a view can insert and delete rows instead of
/// reloading.
///
/// Positions are 1-based, as scripts see `items`: `deleted` refer to the list before the change,
/// `inserted` and `updated` to the list after it. Applying the deletions (highest first), then the
/// insertions (lowest first), then the updates to the old list gives the new one. The change set
/// carries the inserted and updated items themselves (``insertedItems``, ``updatedItems``, in the
/// order of their positions), so an observer rebuilds the list without reading `items` again.
///
/// ```swift
/// var shown: [Value] = ["a", "b"]
/// try ChangeSet(value: payload).apply(to: &shown)   // payload: a didChange event's value
/// ```
public struct ChangeSet: Sendable, Hashable {
    public var inserted: [Int]
    public var deleted: [Int]
    public var updated: [Int]
    /// The whole list changed: read it again (``items`` holds it when the change set carries it).
    public var reload: Bool
    /// The items now at the positions in ``inserted``, one for each.
    public var insertedItems: [Value]
    /// The items now at the positions in ``updated``, one for each.
    public var updatedItems: [Value]
    /// With ``reload``: the whole list after the change, when the change set carries it.
    public var items: [Value]?

    public init(inserted: [Int] = [], deleted: [Int] = [], updated: [Int] = [], reload: Bool = false,
                insertedItems: [Value] = [], updatedItems: [Value] = [], items: [Value]? = nil) {
        self.inserted = inserted
        self.deleted = deleted
        self.updated = updated
        self.reload = reload
        self.insertedItems = insertedItems
        self.updatedItems = updatedItems
        self.items = items
    }

    public static let reloadAll = ChangeSet(reload: true)

    /// A reload carrying the whole new list.
    public static func reload(_ items: [Value]) -> ChangeSet { ChangeSet(reload: true, items: items) }

    public var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && updated.isEmpty && !reload }

    /// True when the inserted and updated items travel with the positions, so ``apply(to:)``
    /// needs nothing else.
    public var carriesItems: Bool {
        reload ? items != nil : (insertedItems.count == inserted.count && updatedItems.count == updated.count)
    }

    /// The change set as scripts see it: `{ inserted, deleted, updated, reload, insertedItems,
    /// updatedItems[, items] }`.
    public var value: Value {
        var fields: Fields = [
            "inserted": .array(inserted.map { .integer(Int64($0)) }),
            "deleted": .array(deleted.map { .integer(Int64($0)) }),
            "updated": .array(updated.map { .integer(Int64($0)) }),
            "reload": .bool(reload),
            "insertedItems": .array(insertedItems),
            "updatedItems": .array(updatedItems),
        ]
        if let items { fields["items"] = .array(items) }
        return .object(fields)
    }

    /// The names of ``value``'s fields, sorted: every change set has the first six, a reload
    /// that carries its list has `items` too.
    public static let fieldNames = ["deleted", "inserted", "insertedItems", "items", "reload", "updated", "updatedItems"]

    /// True when `value` is a change set as ``value`` makes it (a `didChange` payload), so a
    /// binding can give it the shape that names a misspelled field.
    public static func isChangeSet(_ value: Value) -> Bool {
        guard case .object(let fields) = value, case .bool? = fields["reload"], case .array? = fields["inserted"] else { return false }
        return true
    }

    /// The change set a value holds: what ``value`` makes, or a table a script built with the same
    /// fields (each optional; positions are integers of 1 or more).
    ///
    /// - Throws: `invalid_argument` naming the field that is not what it should be, or one no
    ///   change set has (`insertd`: it would be left out without a word).
    public init(value: Value) throws(ServiceError) {
        if case .array(let items) = value, items.isEmpty {
            // `{}` reads as an empty list: a change set with no fields says nothing to apply.
            throw ServiceError(.invalidArgument, "an empty table is no change set: give at least one of inserted=, deleted=, updated= "
                               + "(lists of positions) or reload = true, or pass the change set a collection's didChange handler gets")
        }
        guard case .object(let fields) = value else {
            throw ServiceError(.invalidArgument, "a change set must be a table {inserted=, deleted=, updated=, reload=}, got \(value.typeName)")
        }
        for (key, _) in fields where !Self.fieldNames.contains(key) {
            let closest = NameSuggestion.closest(to: key, among: Self.fieldNames)
            throw ServiceError(.invalidArgument, "a change set has no field '\(key)' (\(NameSuggestion.listing("fields", Self.fieldNames, suggesting: closest)))")
        }
        func positions(_ name: String) throws(ServiceError) -> [Int] {
            let field = value[name]
            if field.isNull { return [] }
            guard let items = field.arrayValue else {
                throw ServiceError(.invalidArgument, "change set field '\(name)' must be an array of positions, got \(field.typeName)")
            }
            var result: [Int] = []
            result.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                guard let position = item.integerValue, position >= 1, position <= Int64(Int.max) else {
                    throw ServiceError(.invalidArgument, "change set field '\(name)'[\(index + 1)] must be a position (an integer >= 1), got \(item.jsonText.prefix(40))")
                }
                result.append(Int(position))
            }
            return result
        }
        func list(_ name: String) throws(ServiceError) -> [Value]? {
            let field = value[name]
            if field.isNull { return nil }
            guard let items = field.arrayValue else {
                throw ServiceError(.invalidArgument, "change set field '\(name)' must be an array, got \(field.typeName)")
            }
            return items
        }
        let reload = value["reload"]
        guard reload.isNull || reload.boolValue != nil else {
            throw ServiceError(.invalidArgument, "change set field 'reload' must be a boolean, got \(reload.typeName)")
        }
        self.init(inserted: try positions("inserted"), deleted: try positions("deleted"), updated: try positions("updated"),
                  reload: reload.boolValue ?? false, insertedItems: try list("insertedItems") ?? [],
                  updatedItems: try list("updatedItems") ?? [], items: try list("items"))
    }

    /// One step of applying a change set.
    public enum Edit {
        /// Remove the item at this 0-based position.
        case delete(Int)
        /// Insert this item at this 0-based position.
        case insert(Int, Value)
        /// Replace the item at this 0-based position.
        case update(Int, Value)
        /// Replace everything with these items.
        case reload([Value])
    }

    /// The edits that turn a list of `count` items into the new one, in the order to make them.
    ///
    /// - Parameters:
    ///   - count: how many items the list had before the change.
    ///   - newItems: the list after the change, where the items come from when the change set does
    ///     not carry them (nil when it does).
    /// - Throws: `invalid_argument` when the change set does not fit a list of `count` items (a
    ///   position out of range), or lacks the items it needs; nothing has been edited then.
    public func edits(count: Int, newItems: [Value]? = nil) throws(ServiceError) -> [Edit] {
        if reload {
            guard let list = items ?? newItems else {
                throw ServiceError(.invalidArgument, "a reload change set needs the new items (pass the collection's items)")
            }
            return [.reload(list)]
        }
        let carried = insertedItems.count == inserted.count && updatedItems.count == updated.count
        guard carried || newItems != nil else {
            throw ServiceError(.invalidArgument, "the change set carries no items for its inserted and updated positions (pass the collection's items)")
        }
        var edits: [Edit] = []
        edits.reserveCapacity(deleted.count + inserted.count + updated.count)
        var size = count
        var lastDeleted = Int.max
        for position in deleted.sorted(by: >) {
            guard position <= size, position < lastDeleted else {
                throw ServiceError(.invalidArgument, "deleted position \(position) is outside the list of \(count) items (or repeated)")
            }
            lastDeleted = position
            edits.append(.delete(position - 1))
            size -= 1
        }
        let insertions = zip(inserted, carried ? insertedItems : inserted.map { _ in Value.null }).sorted { $0.0 < $1.0 }
        for (position, item) in insertions {
            guard position <= size + 1 else {
                throw ServiceError(.invalidArgument, "inserted position \(position) is past the end of the list of \(size) items")
            }
            edits.append(.insert(position - 1, carried ? item : try Self.item(position, of: newItems)))
            size += 1
        }
        for (offset, position) in updated.enumerated() {
            guard position <= size else {
                throw ServiceError(.invalidArgument, "updated position \(position) is outside the list of \(size) items")
            }
            edits.append(.update(position - 1, carried ? updatedItems[offset] : try Self.item(position, of: newItems)))
        }
        return edits
    }

    /// The item at 1-based `position` of the list after the change.
    private static func item(_ position: Int, of newItems: [Value]?) throws(ServiceError) -> Value {
        guard let newItems, position <= newItems.count else {
            throw ServiceError(.invalidArgument, "position \(position) is past the end of the \(newItems?.count ?? 0) items given")
        }
        return newItems[position - 1]
    }

    /// Applies the change set to `list`, the list before the change.
    ///
    /// - Throws: see ``edits(count:newItems:)``; `list` is unchanged then.
    public func apply(to list: inout [Value], newItems: [Value]? = nil) throws(ServiceError) {
        for edit in try edits(count: list.count, newItems: newItems) {
            switch edit {
            case .delete(let index): list.remove(at: index)
            case .insert(let index, let item): list.insert(item, at: index)
            case .update(let index, let item): list[index] = item
            case .reload(let items): list = items
            }
        }
    }

    /// ``value`` with the records it names, taken from `items` (the list right after this
    /// change): `insertedRecords[k]` is the record at `inserted[k]`, `updatedRecords[k]` the one
    /// at `updated[k]`. An observer applies each change set to the list it had with these,
    /// never with `items` read later, which may already hold changes it has not heard of yet.
    public func value(after items: [Value]) -> Value {
        guard case .object(var fields) = value else { return value }
        func records(_ positions: [Int]) -> Value {
            .array(positions.map { items.indices.contains($0 - 1) ? items[$0 - 1] : .null })
        }
        fields["insertedRecords"] = records(inserted)
        fields["updatedRecords"] = records(updated)
        return .object(fields)
    }
}

