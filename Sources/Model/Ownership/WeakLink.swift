/// A reference that reads nil once its object has gone, as `weak` does, for objects that live and
/// die on one thread (the host's loop). One of the two places the package skips Swift's checked
/// references (the other is ``UnownedRef``).
///
/// The first `weak` reference to an object gives it a side table for good, and from then on every
/// retain and release of that object takes the Swift runtime's slow path. The host, its binding,
/// its scopes and its observer registry are retained many times in every service call and
/// delivery, so they hand out a link instead: a small object of their own, which holders retain on
/// the fast path.
///
/// Invariant (stated here once; every holder relies on it): the object fills its link at the end
/// of its `init` (``attach(_:)``) and clears it first thing in its `deinit` (``clear()``), or
/// earlier, on its thread, once nothing may reach it any more (the host, when it finishes); every
/// read happens on that thread. There no clearing can happen in the middle of a read, so a read
/// sees the live object or nil, never a freed one. Debug builds keep a real `weak` reference
/// beside the unchecked one and stop at a read of an object freed without ``clear()``, so the
/// tests (and `make sanitize`) check the invariant; release builds keep only the unchecked one.
package final class WeakLink<Object: AnyObject> {
    /// The object, or nil once it has gone.
    @inlinable package var object: Object? {
        #if DEBUG
        // An attached link whose object is gone was not cleared by its deinit: the unchecked
        // reference below would be a freed object.
        precondition(!isAttached || shadow != nil, "WeakLink<\(Object.self)> read after its object was freed without clear()")
        #endif
        return storedObject
    }
    // Unchecked access and reference: read on every service call, on one thread only, never inout
    // (see the invariant above). A direct access to a stored property from another module is
    // checked at run time whatever the property says; the inlinable accessor carries this
    // module's unchecked access instead.
    @exclusivity(unchecked) @usableFromInline unowned(unsafe) var storedObject: Object?
    #if DEBUG
    @usableFromInline weak var shadow: Object?
    @usableFromInline var isAttached = false
    #endif

    /// An empty link, for an object to fill as its `init` ends.
    package init() {}

    /// Points the link at `object`, its owner.
    package func attach(_ object: Object) {
        storedObject = object
        #if DEBUG
        shadow = object
        isAttached = true
        #endif
    }

    /// Called by the object as its `deinit` starts (or when it shuts down for good).
    package func clear() {
        storedObject = nil
        #if DEBUG
        isAttached = false
        #endif
    }
}
