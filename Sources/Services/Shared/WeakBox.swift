import Synchronization

/// A weak reference that can cross threads: filled once its object exists (its `init` makes the
/// callbacks that read the box before it can point the box at itself), then read from the
/// reactor thread and the clock's. Checked: the reference sits behind a mutex, so a read racing
/// the fill or the object's release is ordered, not a data race.
final class WeakBox<Object: AnyObject & Sendable>: Sendable {
    private let reference = Mutex(Reference())

    private struct Reference {
        weak var object: Object?
    }

    init() {}

    /// The object, or nil before the fill and once it has gone.
    var object: Object? {
        get { reference.withLock { $0.object } }
        set { reference.withLock { $0.object = newValue } }
    }
}
