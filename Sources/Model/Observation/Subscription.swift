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

    public let id: Int
    public let target: Target
    /// Where the subscription was made (`script.lua:12`), for error reports.
    public let site: String
    public let coalesces: Bool
    public let once: Bool
    /// An opaque number for the dispatcher (the binding keeps its handler's reference here).
    public var token: Int32
    public internal(set) var deliveries = 0
    public internal(set) var errors: Int32 = 0
    var consecutiveErrors: Int32 = 0
    public private(set) var isActive = true
    public var ownerSlot = -1
    public private(set) weak var owner: Scope?
    weak var registry: ObserverRegistry?
    let handler: Handler

    init(id: Int, target: Target, site: String, coalesces: Bool, once: Bool, token: Int32,
         owner: Scope?, registry: ObserverRegistry, handler: Handler) {
        self.id = id
        self.target = target
        self.site = site
        self.coalesces = coalesces
        self.once = once
        self.token = token
        self.owner = owner
        self.registry = registry
        self.handler = handler
    }

    /// Stops deliveries. Idempotent; safe from inside a handler, including its own.
    public func cancel() {
        guard isActive else { return }
        isActive = false
        registry?.subscriptionEnded(self)
        owner?.forget(self)
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
