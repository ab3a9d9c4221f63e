/// Something an owner can end: a subscription, a timer, a request, a task, a started service.
public protocol Cancellable: AnyObject {
    /// Stops it for good. Idempotent.
    func cancel()
    /// The slot the owning ``Scope`` keeps it in (-1 when not owned); managed by the scope.
    /// 32 bits, so a subscription keeps it in padding: a scope never holds 2^31 items (that
    /// would be 32 GiB of slots alone).
    var ownerSlot: Int32 { get set }
}

/// An owner: everything adopted by a scope ends when the scope ends.
///
/// The script's main chunk owns a scope that ends at exit; a controller owns one for its lifetime
/// and one for each appearance. A user never pairs add and remove by hand: ending the owner is
/// enough. Adding to and removing from a scope is O(1).
public final class Scope {
    /// Who owns it, for introspection (`script`, `Tracker`).
    public let name: String
    /// True once ``end()`` ran: what it adopts from then on is cancelled at once.
    public var isEnded: Bool { ended }
    // Touched on every service call (adopt, then forget). Private, so the optimizer sees every
    // access and drops the run-time exclusivity check: no access to these is held across a call
    // that could come back to them (an item's slot is set before it is appended, and popped
    // before it is cancelled).
    private var ended = false
    private var items: [any Cancellable] = []
    /// What the things it owns refer to it by (``WeakLink``: a `weak` reference would put every
    /// retain of the scope on the slow path).
    package let weakLink = WeakLink<Scope>()

    public init(name: String) {
        self.name = name
        weakLink.attach(self)
    }

    /// A scope dropped without ``end()`` still ends what it owns; they no longer see it.
    deinit {
        weakLink.clear()
        end()
    }

    /// Takes ownership of `item`; adopting into an ended scope cancels the item at once.
    public func adopt(_ item: any Cancellable) {
        guard !ended else {
            item.cancel()
            return
        }
        item.ownerSlot = Int32(truncatingIfNeeded: items.count)
        items.append(item)
    }

    /// Lets go of `item` (it finished or was cancelled on its own).
    public func forget(_ item: any Cancellable) {
        let slot = Int(item.ownerSlot)
        guard slot >= 0, slot < items.count, items[slot] === item else { return }
        let last = items.removeLast()
        if slot < items.count {
            items[slot] = last
            last.ownerSlot = Int32(truncatingIfNeeded: slot)
        }
        item.ownerSlot = -1
    }

    /// Whether `item` is one of the live things the scope owns.
    public func owns(_ item: any Cancellable) -> Bool {
        let slot = Int(item.ownerSlot)
        return slot >= 0 && slot < items.count && items[slot] === item
    }

    /// How many live things the scope owns.
    public var count: Int { items.count }

    /// Ends the scope: cancels everything it owns, from the last slot down (newest first, except
    /// that ``forget(_:)`` moves the last item into the freed slot). Idempotent.
    public func end() {
        ended = true
        while let item = items.popLast() {
            item.ownerSlot = -1
            item.cancel()
        }
    }

    /// Ends what it owns and opens it again, empty: `crescent test` runs a spec file's tests in one
    /// host, and each test's script scope starts with nothing (what the test before started was
    /// cancelled here). The scope's identity stays: the controllers' prelude holds it.
    public func reopen() {
        end()
        ended = false
    }
}
