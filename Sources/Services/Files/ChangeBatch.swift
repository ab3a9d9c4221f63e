public import Model

/// The changes a watcher saw in one burst, folded per path so that a burst reads as what it did:
/// an editor's save (a temporary file written, then renamed over the original) is one
/// `modified`; a file made and removed within the burst is nothing.
///
/// Adding is O(1) (a table from path to slot): a burst of 10,000 new files is 30,000 inotify
/// events, and a linear search per event kept the reactor thread busy for seconds.
public struct ChangeBatch: Sendable, Equatable {
    /// What happened to a path.
    public enum Kind: String, Sendable {
        case created, modified, deleted
    }

    /// Paths in the order they first changed; nil for a path whose changes cancelled out.
    /// Paths as their bytes (a name need not be UTF-8).
    private var slots: [(path: FilePath, kind: Kind?)] = []
    private var slotOfPath: [FilePath: Int] = [:]
    private var liveCount = 0
    /// True when the kernel dropped events (its queue overflowed) during the burst: the changes
    /// listed are not all there were, and the script should look again (list the folder).
    public private(set) var overflowed = false

    public init() {}

    public var isEmpty: Bool { liveCount == 0 && !overflowed }

    /// Paths in the order they first changed, with what the burst did to each (a path that is
    /// not UTF-8 with its other bytes written `\xFF`; ``value`` gives its bytes).
    public var changes: [(path: String, kind: Kind)] {
        pathChanges.map { ($0.path.text ?? $0.path.shown, $0.kind) }
    }

    /// Paths in the order they first changed, as their bytes, with what the burst did to each.
    var pathChanges: [(path: FilePath, kind: Kind)] {
        slots.compactMap { slot in slot.kind.map { (slot.path, $0) } }
    }

    /// Folds `kind` for `path` into the batch.
    public mutating func add(_ path: String, _ kind: Kind) {
        add(FilePath(path), kind)
    }

    /// Folds `kind` for `path` into the batch.
    mutating func add(_ path: FilePath, _ kind: Kind) {
        guard let index = slotOfPath[path], let current = slots[index].kind else {
            if let index = slotOfPath[path] {
                // It was made and removed earlier in the burst: it counts as new again, in its
                // old place.
                slots[index].kind = kind
            } else {
                slotOfPath[path] = slots.count
                slots.append((path, kind))
            }
            liveCount += 1
            return
        }
        switch (current, kind) {
        case (.created, .deleted):
            slots[index].kind = nil
            liveCount -= 1
        case (.created, _):
            break
        case (.deleted, .created), (.deleted, .modified):
            slots[index].kind = .modified
        case (_, .deleted):
            slots[index].kind = .deleted
        default:
            break
        }
    }

    /// Events were lost (inotify's queue overflowed): the burst says so.
    public mutating func markOverflowed() {
        overflowed = true
    }

    /// `{ changes = { { path, kind }, ... } }` (with `overflow = true` when events were lost):
    /// `didChange`'s payload, each path a string of exactly its bytes.
    /// Models, not plain tables: a misspelled read (`e.chnges`, `c.pth`) names the fields.
    public var value: Value {
        let changes = Value.array(pathChanges.map { .model(DataModel(Self.changeSchema, [$0.path.value, .string($0.kind.rawValue)])) })
        return .model(DataModel(Self.batchSchema, [changes, overflowed ? true : .null]))
    }

    /// The fields of `didChange`'s payload and of each of its changes, declared once.
    static let batchSchema = ModelSchema("fileChanges", ["changes", "overflow"])
    static let changeSchema = ModelSchema("fileChange", ["path", "kind"])

    public static func == (lhs: ChangeBatch, rhs: ChangeBatch) -> Bool {
        let left = lhs.pathChanges, right = rhs.pathChanges
        return left.map(\.path) == right.map(\.path) && left.map(\.kind) == right.map(\.kind) && lhs.overflowed == rhs.overflowed
    }
}
