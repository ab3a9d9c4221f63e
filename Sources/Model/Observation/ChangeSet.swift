/// What changed in an observable collection, so a view can insert and delete rows instead of
/// reloading.
///
/// Positions are 1-based, as scripts see `items`: `deleted` refer to the list before the change,
/// `inserted` and `updated` to the list after it. Applying the deletions (highest first), then the
/// insertions (lowest first), to the old list gives the new one.
public struct ChangeSet: Sendable, Hashable {
    public var inserted: [Int]
    public var deleted: [Int]
    public var updated: [Int]
    /// The whole list changed: read it again.
    public var reload: Bool

    public init(inserted: [Int] = [], deleted: [Int] = [], updated: [Int] = [], reload: Bool = false) {
        self.inserted = inserted
        self.deleted = deleted
        self.updated = updated
        self.reload = reload
    }

    public static let reloadAll = ChangeSet(reload: true)

    public var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && updated.isEmpty && !reload }

    public var value: Value {
        .object([
            "inserted": .array(inserted.map { .integer(Int64($0)) }),
            "deleted": .array(deleted.map { .integer(Int64($0)) }),
            "updated": .array(updated.map { .integer(Int64($0)) }),
            "reload": .bool(reload),
        ])
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
