/// The observer registry: who observes what, and the delivery of changes and events.
///
/// It lives on one loop (it is not `Sendable`) and is driven by its host: changes and events are
/// queued as they arrive (``propertyChanged(_:key:to:)``, ``post(_:event:object:payload:)``) and
/// delivered when the host calls ``deliverPending()``, once per loop turn. The rules:
///
/// - Subscribers of one change run in subscription order (FIFO), one at a time, never inside the
///   code that made the change.
/// - Property changes are coalesced per key and per round (last value wins, `coalesced` counts the
///   changes) unless a subscription asks for every change; events are never dropped.
/// - Changes made by handlers are delivered in the next round. When rounds keep causing rounds
///   for `maxChainedRounds`, the registry reports a cycle and drops that chain.
/// - A handler that throws does not stop the others; after `maxFailures` consecutive failures its
///   subscription is cancelled with a report.
public final class ObserverRegistry {
    /// What the registry tells its host about.
    public enum Report {
        case handlerFailed(Subscription, any Error)
        case autoCancelled(Subscription)
        case cycle(String)
    }

    /// Where ``Subscription/Handler/dispatched`` deliveries go. Held strongly (a weak load on
    /// every delivery is measurable); the owner clears it when it tears down.
    public var dispatcher: (any DeliveryDispatcher)?
    public let maxFailures: Int32
    public let maxChainedRounds: Int
    private let report: (Report) -> Void

    private var nextID = 0
    /// Numbers every queued change and event, so each goes only to subscriptions older than it.
    private var sequence: UInt32 = 0
    private var propertySubscribers: [PropertyKey: SubscriberList] = [:]
    private var eventSubscribers: [String: SubscriberList] = [:]
    private var delegateSubscribers: [ObjectIdentifier: SubscriberList] = [:]
    private var currentValues: [PropertyKey: Value] = [:]
    /// What the next round delivers, each item marked when a handler queued it (a chain).
    /// Read after every turn (``hasPending``), on the registry's loop only.
    private var queue: [(item: Pending, chained: Bool)] = []
    private var batches: [PropertyKey: PropertyBatch] = [:]
    private var isDelivering = false
    private var queuedByHandlers = false
    private var chainedRounds = 0
    /// Creation sites, shared by every subscription made at the same place.
    private var sites: [String] = ["(one of many sites)"]
    /// What subscriptions refer to the registry by (``WeakLink``).
    let weakLink = WeakLink<ObserverRegistry>()
    private var siteNumbers: [String: UInt16] = [:]
    /// Subscriptions not yet cancelled.
    public private(set) var liveCount = 0

    /// - Parameter maxFailures: consecutive failures before auto-cancel, 1 to 255.
    public init(maxFailures: Int32 = 10, maxChainedRounds: Int = 100, report: @escaping (Report) -> Void) {
        self.maxFailures = min(max(maxFailures, 1), 255)
        self.maxChainedRounds = maxChainedRounds
        self.report = report
        weakLink.attach(self)
    }

    deinit { weakLink.clear() }

    /// True when a round of deliveries is waiting.
    public var hasPending: Bool { !queue.isEmpty }

    // MARK: Subscribing

    /// Observes property `key` of `object`. Unless `initial` is false, the current value is
    /// delivered once (`initial == true`) in the next round.
    public func observe(_ object: ObjectHandle, key: String, initial: Bool = true, coalesce: Bool = true,
                        once: Bool = false, site: String, owner: Scope?, token: Int32 = 0,
                        handler: Subscription.Handler) -> Subscription {
        let propertyKey = PropertyKey(object: object.id, key: key)
        if currentValues[propertyKey] == nil {
            currentValues[propertyKey] = object.object.interface.property(key)?.read(object.object) ?? .null
        }
        let subscription = make(.property(object, key), site: site, coalesce: coalesce, once: once,
                                token: token, owner: owner, handler: handler)
        list(&propertySubscribers, propertyKey).append(subscription)
        if initial {
            subscription.awaitsInitial = true
            enqueue(.initial(subscription, currentValues[propertyKey] ?? .null))
        }
        owner?.adopt(subscription) // last: adopting into an ended scope cancels at once
        return subscription
    }

    /// Handles events named `name`; with `object`, only those that object emits.
    public func on(_ name: String, object: ObjectHandle? = nil, once: Bool = false, site: String,
                   owner: Scope?, token: Int32 = 0, handler: Subscription.Handler) -> Subscription {
        let subscription = make(.event(name, object), site: site, coalesce: false, once: once,
                                token: token, owner: owner, handler: handler)
        list(&eventSubscribers, name).append(subscription)
        owner?.adopt(subscription)
        return subscription
    }

    /// Handles every event `object` emits (delegate dispatch).
    public func onAllEvents(of object: ObjectHandle, site: String, owner: Scope?, token: Int32 = 0,
                            handler: Subscription.Handler) -> Subscription {
        let subscription = make(.allEvents(object), site: site, coalesce: false, once: false,
                                token: token, owner: owner, handler: handler)
        list(&delegateSubscribers, object.id).append(subscription)
        owner?.adopt(subscription)
        return subscription
    }

    private func make(_ target: Subscription.Target, site: String, coalesce: Bool, once: Bool, token: Int32,
                      owner: Scope?, handler: Subscription.Handler) -> Subscription {
        nextID += 1
        liveCount += 1
        let subscription = Subscription(id: nextID, target: target, siteNumber: number(ofSite: site), sequence: sequence,
                                        coalesces: coalesce,
                                        once: once, token: token, owner: owner, registry: self, handler: handler)
        return subscription
    }

    /// The number of `site` in the table of sites (code has a bounded number of places).
    private func number(ofSite site: String) -> UInt16 {
        if let known = siteNumbers[site] { return known }
        // Code has a bounded number of places; generated chunks could make unbounded names.
        if sites.count >= Self.maxSites { return 0 }
        let number = UInt16(truncatingIfNeeded: sites.count)
        sites.append(site)
        siteNumbers[site] = number
        return number
    }

    private static let maxSites = Int(UInt16.max)

    /// The site a subscription was made at.
    func site(number: UInt32) -> String {
        Int(number) < sites.count ? sites[Int(number)] : "?"
    }

    private func list<Key: Hashable>(_ lists: inout [Key: SubscriberList], _ key: Key) -> SubscriberList {
        if let existing = lists[key] { return existing }
        let created = SubscriberList()
        lists[key] = created
        return created
    }

    func subscriptionEnded(_ subscription: Subscription) {
        liveCount -= 1
        defer { if subscription.swiftHandler == nil { dispatcher?.subscriptionEnded(subscription) } }
        switch subscription.target {
        case .property(let object, let key):
            let propertyKey = PropertyKey(object: object.id, key: key)
            if propertySubscribers[propertyKey]?.noteCancelled() == true {
                propertySubscribers[propertyKey] = nil
                currentValues[propertyKey] = nil
                batches[propertyKey] = nil
            }
        case .event(let name, _):
            if eventSubscribers[name]?.noteCancelled() == true { eventSubscribers[name] = nil }
        case .allEvents(let object):
            if delegateSubscribers[object.id]?.noteCancelled() == true { delegateSubscribers[object.id] = nil }
        }
    }

    // MARK: Changes

    /// True while property `key` of `object` has a live observer.
    public func isObserved(_ object: ObjectHandle, key: String) -> Bool {
        propertySubscribers[PropertyKey(object: object.id, key: key)] != nil
    }

    /// The value subscribers of `key` last saw or will see next, else nil when nobody observes it.
    public func currentValue(of object: ObjectHandle, key: String) -> Value? {
        currentValues[PropertyKey(object: object.id, key: key)]
    }

    /// Queues a property change for the next round. Only observed properties are tracked.
    public func propertyChanged(_ object: ObjectHandle, key: String, to value: Value) {
        let propertyKey = PropertyKey(object: object.id, key: key)
        guard propertySubscribers[propertyKey] != nil, let old = currentValues[propertyKey] else { return }
        currentValues[propertyKey] = value
        sequence &+= 1
        if let batch = batches[propertyKey] {
            batch.changes.append(PropertyBatch.Change(old: old, new: value, sequence: sequence))
            if isDelivering { queuedByHandlers = true }
            return
        }
        batches[propertyKey] = PropertyBatch(first: PropertyBatch.Change(old: old, new: value, sequence: sequence))
        enqueue(.property(propertyKey, object))
    }

    /// True when event `name` (the full name) of `object` has a subscriber or a delegate: else
    /// ``post(_:event:object:payload:)`` drops it.
    public func hasSubscribers(to name: String, of object: ObjectHandle?) -> Bool {
        eventSubscribers[name] != nil || (object.map { delegateSubscribers[$0.id] != nil } ?? false)
    }

    /// Queues an event for the next round. `name` is the full name (`location.didFail`), `event`
    /// the emitter's own name for it (`didFail`).
    public func post(_ name: String, event: String? = nil, object: ObjectHandle? = nil, payload: EventPayload) {
        guard hasSubscribers(to: name, of: object) else { return }
        sequence &+= 1
        enqueue(.event(EventPost(name: name, event: event ?? name, object: object, payload: payload, sequence: sequence)))
    }

    /// Queues events `name` of `object`, one per payload in order, as ``post(_:event:object:payload:)``
    /// would queue them one by one (each numbered, so a subscription made meanwhile hears none of
    /// them), for one queue entry.
    public func post(_ name: String, event: String, object: ObjectHandle?, payloads: [Value]) {
        guard !payloads.isEmpty, hasSubscribers(to: name, of: object) else { return }
        let first = sequence &+ 1
        sequence &+= UInt32(truncatingIfNeeded: payloads.count)
        enqueue(.events(EventBatchPost(name: name, event: event, object: object, payloads: payloads, firstSequence: first)))
    }

    private func enqueue(_ item: Pending) {
        if isDelivering { queuedByHandlers = true }
        queue.append((item, isDelivering))
    }

    // MARK: Delivery

    /// Delivers one round: everything queued before this call. Changes the handlers make are
    /// queued for the next round.
    public func deliverPending() {
        guard !queue.isEmpty, !isDelivering else { return }
        chainedRounds = queuedByHandlers ? chainedRounds + 1 : 0
        queuedByHandlers = false
        var round = queue
        var roundBatches = batches
        queue = []
        batches = [:]
        if chainedRounds >= maxChainedRounds {
            // Drop the chain; what arrived from outside it (a service, a timer) is still delivered.
            chainedRounds = 0
            report(.cycle(Self.describe(round.filter(\.chained).map(\.item))))
            round.removeAll(where: \.chained)
        }
        isDelivering = true
        defer { isDelivering = false }
        // Changes a subscriber must see after its initial value, which comes later in the round.
        var deferred: [ObjectIdentifier: PropertyBatch] = [:]
        for (item, _) in round {
            switch item {
            case .initial(let subscription, let value):
                guard subscription.isActive, case .property(let object, let key) = subscription.target else { continue }
                subscription.awaitsInitial = false
                deliver(PropertyChange(subscription: subscription, object: object, key: key, new: value,
                                       old: nil, initial: true, coalesced: 0))
                if let batch = deferred.removeValue(forKey: ObjectIdentifier(subscription)) {
                    deliver(batch, to: subscription, object: object, key: key)
                }
            case .property(let propertyKey, let object):
                // removeValue: a key re-observed after its last observer left can be queued twice.
                guard let batch = roundBatches.removeValue(forKey: propertyKey),
                      let subscribers = propertySubscribers[propertyKey] else { continue }
                for subscription in subscribers.snapshot() where subscription.isActive {
                    if subscription.awaitsInitial {
                        deferred[ObjectIdentifier(subscription)] = batch
                    } else {
                        deliver(batch, to: subscription, object: object, key: propertyKey.key)
                    }
                }
            case .event(let post):
                for subscription in eventSubscribers(post.name, of: post.object) {
                    deliver(post.payload, as: post.sequence, of: post.name, post.event, post.object, to: subscription)
                }
            case .events(let post):
                // One list for the batch: a subscription made by a handler meanwhile is newer
                // than every event of it, and one cancelled meanwhile is inactive.
                let subscribers = eventSubscribers(post.name, of: post.object)
                for (offset, payload) in post.payloads.enumerated() {
                    let sequence = post.firstSequence &+ UInt32(truncatingIfNeeded: offset)
                    for subscription in subscribers {
                        deliver(.value(payload), as: sequence, of: post.name, post.event, post.object, to: subscription)
                    }
                }
            }
        }
    }

    /// The subscribers of event `name` and the delegates of `object`, in subscription order.
    private func eventSubscribers(_ name: String, of object: ObjectHandle?) -> [Subscription] {
        let subscribers = eventSubscribers[name]?.snapshot() ?? []
        guard let object, let delegates = delegateSubscribers[object.id] else { return subscribers }
        return Self.merge(subscribers, delegates.snapshot())
    }

    /// Delivers the event numbered `sequence` to `subscription` when it is active, has not seen
    /// it and listens to `object`.
    private func deliver(_ payload: EventPayload, as sequence: UInt32, of name: String, _ event: String, _ object: ObjectHandle?,
                         to subscription: Subscription) {
        guard subscription.isActive, subscription.isNew(sequence) else { return }
        if case .event(_, let only?) = subscription.target, only != object { return }
        subscription.seenSequence = sequence
        deliver(EventDelivery(subscription: subscription, name: name, event: event, object: object, payload: payload))
    }

    /// Delivers the changes of `batch` that `subscription` has not seen: folded into one
    /// delivery when it coalesces, one by one when it does not.
    private func deliver(_ batch: PropertyBatch, to subscription: Subscription, object: ObjectHandle, key: String) {
        let count = batch.changes.count
        // Usually the subscriber has seen none of the batch; otherwise skip what it has seen.
        var start = 0
        while start < count && !subscription.isNew(batch.changes[start].sequence) { start += 1 }
        guard start < count else { return }
        subscription.seenSequence = batch.changes[count - 1].sequence
        if subscription.coalesces {
            deliver(PropertyChange(subscription: subscription, object: object, key: key, new: batch.changes[count - 1].new,
                                   old: batch.changes[start].old, initial: false, coalesced: count - start))
            return
        }
        for index in start..<count where subscription.isActive {
            deliver(PropertyChange(subscription: subscription, object: object, key: key, new: batch.changes[index].new,
                                   old: batch.changes[index].old, initial: false, coalesced: 1))
        }
    }

    private func deliver(_ change: PropertyChange) {
        run(change.subscription) {
            guard let swift = change.subscription.swiftHandler else {
                try dispatcher?.deliver(change)
                return
            }
            if case .property(let handler) = swift.handler { try handler(change) }
        }
    }

    private func deliver(_ event: EventDelivery) {
        run(event.subscription) {
            guard let swift = event.subscription.swiftHandler else {
                try dispatcher?.deliver(event)
                return
            }
            if case .event(let handler) = swift.handler { try handler(event) }
        }
    }

    private func run(_ subscription: Subscription, _ body: () throws -> Void) {
        // A one-shot subscription ends as soon as its handler returns; whatever the handler
        // posts is queued for a later round, so it cannot receive twice.
        defer { if subscription.once { subscription.cancel() } }
        subscription.recordDelivery()
        do {
            try body()
            if subscription.consecutiveErrors != 0 { subscription.consecutiveErrors = 0 }
        } catch {
            subscription.recordError()
            report(.handlerFailed(subscription, error))
            if Int32(subscription.consecutiveErrors) >= maxFailures && subscription.isActive {
                subscription.cancel()
                report(.autoCancelled(subscription))
            }
        }
    }

    /// Two lists in subscription order, merged in subscription order.
    private static func merge(_ a: [Subscription], _ b: [Subscription]) -> [Subscription] {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        var merged: [Subscription] = []
        merged.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if b[j].isNewer(than: a[i].id) { merged.append(a[i]); i += 1 } else { merged.append(b[j]); j += 1 }
        }
        merged += a[i...]
        merged += b[j...]
        return merged
    }

    private static func describe(_ round: [Pending]) -> String {
        var names: [String] = []
        for item in round {
            let name: String = switch item {
            case .initial(let subscription, _): subscription.targetDescription
            case .property(let key, let object): "\(object.typeName).\(key.key)"
            case .event(let post): post.name
            case .events(let post): post.name
            }
            if !names.contains(name) { names.append(name) }
        }
        return names.prefix(5).joined(separator: ", ")
    }

    // MARK: Introspection

    /// Every live subscription, in subscription order.
    public var subscriptions: [Subscription] {
        var all: [Subscription] = []
        for list in propertySubscribers.values { all += list.snapshot().filter(\.isActive) }
        for list in eventSubscribers.values { all += list.snapshot().filter(\.isActive) }
        for list in delegateSubscribers.values { all += list.snapshot().filter(\.isActive) }
        return all.sorted { $0.id < $1.id }
    }

    /// Forgets everything: every subscription is cancelled and nothing pending is delivered.
    public func removeAll() {
        queue.removeAll()
        batches.removeAll()
        for subscription in subscriptions { subscription.cancel() }
    }
}
