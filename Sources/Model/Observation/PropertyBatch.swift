/// The changes of one property within one round.
final class PropertyBatch {
    /// One change: a concrete struct rather than a tuple, so copies are specialized.
    struct Change {
        let old: Value
        let new: Value
        let sequence: UInt32
    }

    /// Appended to only while queued, read only while delivered, both on the registry's loop.
    var changes: [Change]
    init(first: Change) { changes = [first] }
}
