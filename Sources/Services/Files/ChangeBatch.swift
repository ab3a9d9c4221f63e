public import Model

/// The changes a watcher saw in one burst, folded per path so that a burst reads as what it did:
/// an editor's save (a temporary file written, then renamed over the original) is one
/// `modified`; a file made and removed within the burst is nothing.
public struct ChangeBatch: Sendable, Equatable {
    /// What happened to a path.
    public enum Kind: String, Sendable {
        case created, modified, deleted
    }

    /// Paths in the order they first changed, with what the burst did to each.
    public private(set) var changes: [(path: String, kind: Kind)] = []

    public init() {}

    public var isEmpty: Bool { changes.isEmpty }

    /// Folds `kind` for `path` into the batch.
    public mutating func add(_ path: String, _ kind: Kind) {
        guard let index = changes.firstIndex(where: { $0.path == path }) else {
            changes.append((path, kind))
            return
        }
        switch (changes[index].kind, kind) {
        case (.created, .deleted):
            changes.remove(at: index)
        case (.created, _):
            break
        case (.deleted, .created), (.deleted, .modified):
            changes[index].kind = .modified
        case (_, .deleted):
            changes[index].kind = .deleted
        default:
            break
        }
    }

    /// `{ changes = { { path, kind }, ... } }`: `didChange`'s payload.
    public var value: Value {
        .object(["changes": .array(changes.map { .object(["path": .string($0.path), "kind": .string($0.kind.rawValue)]) })])
    }

    public static func == (lhs: ChangeBatch, rhs: ChangeBatch) -> Bool {
        lhs.changes.map(\.path) == rhs.changes.map(\.path) && lhs.changes.map(\.kind) == rhs.changes.map(\.kind)
    }
}
