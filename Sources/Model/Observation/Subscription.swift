/// One observer's registration: a property observation or an event handler.
///
/// Created by ``ObserverRegistry``; cancelling is idempotent, and a cancelled subscription never
/// receives anything again, even a delivery already under way.
public final class Subscription: Cancellable {
    /// What a subscription listens to.
    public enum Target {
        /// Property `key` of an object.
        case property(ObjectHandle, String)
        /// Events named `name` (`location.didFail`), from one object or from any.
        case event(String, ObjectHandle?)
        /// Every event of one object (delegate dispatch).
        case allEvents(ObjectHandle)
    }

    /// How deliveries reach the subscriber.
    public enum Handler {
        case property((PropertyChange) throws -> Void)
        case event((EventDelivery) throws -> Void)
        /// Delivered through the registry's ``DeliveryDispatcher`` with ``token``.
        case dispatched
    }

    // Stored properties are laid out in declaration order; small ones fill the padding after
    // `target`, keeping an instance at 104 bytes (benchmarked as bytes per live subscription;
    // malloc rounds 104 to 112, and anything past 104 to 128).
    //
    // The mutable ones are read on every delivery, on the registry's loop only. They are private
    // or internal (the public ones go through accessors), so the optimizer sees every access and
    // drops the run-time exclusivity check: no code holds an inout access to one of them across a
    // call that could touch it again.
    public let target: Target
    private var flags: UInt8
    var consecutiveErrors: UInt8 = 0
    /// The creation site, as an index into the registry's table of sites.
    private let siteNumber: UInt16
    private var errorCount: UInt16 = 0
    private let number: UInt32
    /// An opaque number for the dispatcher (the binding keeps its handle's reference here).
    public var token: Int32 {
        get { storedToken }
        set { storedToken = newValue }
    }
    private var storedToken: Int32
    private var deliveryCount: UInt32 = 0
    /// The registry's sequence number of the last change or event this subscription has seen
    /// (or that came before it existed): anything queued at or before it is not for it.
    var seenSequence: UInt32
    /// A second opaque number for the dispatcher (the binding keeps the reference of a
    /// property's shared change prototype here).
    public var detail: Int32 {
        get { storedDetail }
        set { storedDetail = newValue }
    }
    private var storedDetail: Int32 = 0
    public var ownerSlot: Int32 {
        get { storedOwnerSlot }
        set { storedOwnerSlot = newValue }
    }
    private var storedOwnerSlot: Int32 = -1
    /// The owning scope's link (``WeakLink``: a weak reference cost Swift's slow
    /// reference-counting path on every delivery); nil once cancelled.
    private var ownerLink: WeakLink<Scope>?
    /// The scope that owns it; nil once cancelled, when it has none, or once it has gone.
    public var owner: Scope? { ownerLink?.object }
    private let registryLink: WeakLink<ObserverRegistry>
    /// The registry that made it, while it lives.
    var registry: ObserverRegistry? { registryLink.object }
    /// The Swift handler, or nil for ``Handler/dispatched`` subscriptions (and once cancelled,
    /// so a closure that captures its own subscription is not kept alive by it).
    private(set) var swiftHandler: SwiftHandler?

    private static let coalescesFlag: UInt8 = 1, onceFlag: UInt8 = 2, activeFlag: UInt8 = 4, initialFlag: UInt8 = 8,
                       returnNotedFlag: UInt8 = 16

    init(id: Int, target: Target, siteNumber: UInt16, sequence: UInt32, coalesces: Bool, once: Bool, token: Int32,
         owner: Scope?, registry: ObserverRegistry, handler: Handler) {
        self.target = target
        flags = Self.activeFlag | (coalesces ? Self.coalescesFlag : 0) | (once ? Self.onceFlag : 0)
        number = UInt32(truncatingIfNeeded: id)
        storedToken = token
        self.siteNumber = siteNumber
        seenSequence = sequence
        ownerLink = owner?.weakLink
        registryLink = registry.weakLink
        if case .dispatched = handler { swiftHandler = nil } else { swiftHandler = SwiftHandler(handler) }
    }

    /// Where the subscription was made (`script.lua:12`), for error reports.
    public var site: String { registry?.site(number: UInt32(siteNumber)) ?? "?" }

    /// Creation order within its registry.
    public var id: Int { Int(number) }
    public var coalesces: Bool { flags & Self.coalescesFlag != 0 }
    public var once: Bool { flags & Self.onceFlag != 0 }
    public var isActive: Bool { flags & Self.activeFlag != 0 }
    /// How many times a handler ran for it.
    public var deliveries: Int { Int(deliveryCount) }
    /// How many of those raised (counting stops at 65,535).
    public var errors: Int32 { Int32(errorCount) }

    /// True while the initial delivery is queued: changes that reach the subscription before it
    /// wait until it has been delivered.
    var awaitsInitial: Bool {
        get { flags & Self.initialFlag != 0 }
        set { flags = newValue ? flags | Self.initialFlag : flags & ~Self.initialFlag }
    }

    /// True once the host has said that the handler returned a value it ignores (a `return false`
    /// meant to stop it): said once per subscription, not at every delivery.
    public var saidReturnIgnored: Bool {
        get { flags & Self.returnNotedFlag != 0 }
        set { flags = newValue ? flags | Self.returnNotedFlag : flags & ~Self.returnNotedFlag }
    }

    /// True when the item queued with `sequence` happened after this subscription last looked.
    func isNew(_ sequence: UInt32) -> Bool {
        Int32(bitPattern: sequence &- seenSequence) > 0
    }

    /// True when this subscription was made after the one numbered `id`. Numbers are 32-bit and
    /// wrap; comparing their difference keeps the order right while live subscriptions span fewer
    /// than 2^31 numbers.
    func isNewer(than id: Int) -> Bool {
        Int32(bitPattern: number &- UInt32(truncatingIfNeeded: id)) > 0
    }

    func recordDelivery() { deliveryCount &+= 1 }

    func recordError() {
        if errorCount < .max { errorCount += 1 }
        if consecutiveErrors < .max { consecutiveErrors += 1 }
    }

    /// Stops deliveries. Idempotent; safe from inside a handler, including its own.
    public func cancel() {
        guard isActive else { return }
        flags &= ~Self.activeFlag
        let adopted = ownerSlot >= 0 ? owner : nil
        ownerLink = nil
        registry?.subscriptionEnded(self)
        swiftHandler = nil
        // A scope that is ending (perhaps in its deinit) has let go of it already (slot -1).
        adopted?.forget(self)
    }

    /// True when `scope` owns it: its link compared, the scope not retained (deliveries ask it
    /// every time).
    public func isOwned(by scope: Scope) -> Bool {
        ownerLink === scope.weakLink
    }

    /// `location.location`, `on location.didFail`: what it listens to, for people.
    public var targetDescription: String {
        switch target {
        case .property(let object, let key): "\(object.typeName).\(key)"
        case .event(let name, _): "on \(name)"
        case .allEvents(let object): "delegate of \(object.typeName)"
        }
    }

    /// The owner's name, or `-` when it has none.
    public var ownerName: String { owner?.name ?? "-" }
}

/// Holds a Swift handler out of line, so dispatched subscriptions pay one pointer for it.
final class SwiftHandler {
    let handler: Subscription.Handler
    init(_ handler: Subscription.Handler) { self.handler = handler }
}

/// A property change as one subscriber receives it.
public struct PropertyChange {
    public let subscription: Subscription
    public let object: ObjectHandle
    public let key: String
    public let new: Value
    /// The value before the first change folded into this delivery; nil for the initial delivery.
    public let old: Value?
    public let initial: Bool
    /// How many changes this delivery stands for (1 without coalescing, 0 for the initial one).
    public let coalesced: Int
}

/// The payload of an event: a model value from a service, or whatever a script posted.
public enum EventPayload {
    case value(Value)
    /// A value only the poster's side understands (a Lua value held by the binding).
    case opaque(AnyObject)
}

/// An event as one subscriber receives it.
public struct EventDelivery {
    public let subscription: Subscription
    /// The full name (`location.didFail`).
    public let name: String
    /// The event's own name (`didFail`); equal to `name` for script-posted events.
    public let event: String
    public let object: ObjectHandle?
    public let payload: EventPayload
}

/// Delivers to subscriptions whose handler is ``Subscription/Handler/dispatched`` (the Lua binding).
public protocol DeliveryDispatcher: AnyObject {
    func deliver(_ change: PropertyChange) throws
    func deliver(_ event: EventDelivery) throws
    /// The subscription was cancelled: release what was kept for it.
    func subscriptionEnded(_ subscription: Subscription)
}
