import Model

/// One write a collection asks its backend to make, already checked: records validated and
/// without `id`, field changes merged later against the record the backend has.
enum StoreOperation: Sendable {
    /// Insert records; `single` answers with one record rather than an array.
    case add([Fields], single: Bool)
    /// Set `fields` on the record with `id` (the others stay).
    case update(Int64, fields: Fields)
    /// Delete the records with these ids (sorted, unique), all or none.
    case remove([Int64])
    /// Delete every record of the collection.
    case clear

    /// How many rows it touches: large writes stay off the loop.
    func size(in collection: StoreCollection) -> Int {
        switch self {
        case .add(let records, _): records.count
        case .update: 1
        case .remove(let ids): ids.count
        case .clear: collection.count
        }
    }
}
