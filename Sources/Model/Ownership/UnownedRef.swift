/// A reference to an object that outlives whoever holds the reference, neither retained nor
/// checked: a back-pointer from a part to the whole that owns it (the binding to its host, a
/// plugin call's closures to their runtime). One of the two places the package skips Swift's
/// checked references (the other is ``WeakLink``).
///
/// A checked `unowned` load is a call into the runtime and a retain, and `weak` puts every
/// retain of the object on the runtime's slow path (``WeakLink``); these back-pointers are read
/// once per delivery or plugin call.
///
/// Invariant (stated here once; every holder relies on it): the object is alive at every read,
/// because it owns the holder and ends every way into the holder (its loop jobs, its VM's
/// functions) before it goes. Debug builds keep a real `weak` reference beside the unchecked one
/// and stop at a read of a freed object, so the tests (and `make sanitize`) check the invariant;
/// release builds keep only the unchecked one.
///
/// ```swift
/// final class Part {
///     private let wholeRef: UnownedRef<Whole>
///     var whole: Whole { wholeRef.object }
///     init(whole: Whole) { wholeRef = UnownedRef(whole) }
/// }
/// ```
package struct UnownedRef<Object: AnyObject> {
    @usableFromInline unowned(unsafe) let storedObject: Object
    #if DEBUG
    @usableFromInline weak var shadow: Object?
    #endif

    /// A reference to `object`, which must outlive every copy of this reference.
    @inlinable package init(_ object: Object) {
        storedObject = object
        #if DEBUG
        shadow = object
        #endif
    }

    /// The object.
    @inlinable package var object: Object {
        #if DEBUG
        precondition(shadow != nil, "UnownedRef<\(Object.self)> read after its object was freed")
        #endif
        return storedObject
    }

    /// Runs `body` with the object, not retained for the call (a method called on ``object``
    /// still retains and releases it around the call).
    @inlinable package func withObject<Result>(_ body: (Object) throws -> Result) rethrows -> Result {
        try Unmanaged.passUnretained(object)._withUnsafeGuaranteedRef(body)
    }
}
