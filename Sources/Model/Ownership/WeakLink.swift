/// A reference that reads nil once its object has gone, as `weak` does, for objects that live and
/// die on one thread (the host's loop).
///
/// The first `weak` reference to an object gives it a side table for good, and from then on every
/// retain and release of that object takes the Swift runtime's slow path. The host, its binding,
/// its scopes and its observer registry are retained many times in every service call and
/// delivery (a weak reference to each made a fifth of an awaited call's instructions), so they
/// hand out a link instead: a small object of their own, which holders retain on the fast path.
///
/// The object fills its link at the end of its `init` (``attach(_:)``) and clears it first thing
/// in its `deinit` (``clear()``), or earlier, on its thread, once nothing may reach it any more
/// (the host, when it finishes). Safe because every read happens on the thread the object lives
/// and is cleared on: there no clearing can happen in the middle of a read, so a read sees the
/// live object or nil, never a freed one.
public final class WeakLink<Object: AnyObject> {
    /// The object, or nil once it has gone.
    @inlinable public var object: Object? { storedObject }
    // Read on every service call. Unchecked (no swift_beginAccess per read): read and written on
    // one thread only, never inout. Another module's direct access to a stored property is checked
    // at run time whatever the property says; the inlinable accessor carries this module's
    // unchecked access instead.
    @exclusivity(unchecked) @usableFromInline unowned(unsafe) var storedObject: Object?

    /// An empty link, for an object to fill as its `init` ends.
    public init() {}

    /// Points the link at `object`, its owner.
    public func attach(_ object: Object) { storedObject = object }

    /// Called by the object as its `deinit` starts (or when it shuts down for good).
    public func clear() { storedObject = nil }
}
