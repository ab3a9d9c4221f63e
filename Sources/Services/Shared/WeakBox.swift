/// A weak reference that can cross threads (set once, before it is shared).
final class WeakBox<Object: AnyObject & Sendable>: @unchecked Sendable {
    // @unchecked: `object` is set once right after init, before the box is handed to any other
    // thread, and only read afterwards.
    weak var object: Object?
}
