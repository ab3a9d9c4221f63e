import Model
import Testing

/// Named events, object-scoped handlers, delegates and dispatched deliveries.
@Suite struct ObserverRegistryEventTests {
    final class Dispatcher: DeliveryDispatcher {
        var lines: [String] = []
        var failWith: (any Error)?
        func deliver(_ change: PropertyChange) throws {
            lines.append("property \(change.subscription.token) \(change.key)=\(change.new.text)")
            if let failWith { throw failWith }
        }
        func deliver(_ event: EventDelivery) throws {
            lines.append("event \(event.subscription.token) \(event.name)/\(event.event)")
            if let failWith { throw failWith }
        }
        func subscriptionEnded(_ subscription: Subscription) {
            lines.append("ended \(subscription.token)")
        }
    }

    @Test func eventsAreNeverCoalesced() {
        let (registry, _) = makeRegistry()
        var payloads: [Value] = []
        registry.listen("tick") { payloads.append($0.payload.value!) }
        for value in 1...3 { registry.post("tick", .integer(Int64(value))) }
        registry.deliverPending()
        #expect(payloads == [1, 2, 3])
    }

    @Test func eventsWaitForTheRoundAndCarryTheirNames() {
        let (registry, _) = makeRegistry()
        var received: [EventDelivery] = []
        // A delivery holds its subscription, whose handler holds `received`: let go at the end.
        defer { received.removeAll() }
        let subscription = registry.listen("app.ready") { received.append($0) }
        registry.post("app.ready", ["ok": true])
        #expect(received.isEmpty)
        registry.deliverPending()
        #expect(received.count == 1)
        #expect(received.first?.name == "app.ready")
        #expect(received.first?.event == "app.ready", "a script event's own name is its full name")
        #expect(received.first?.object == nil)
        #expect(received.first?.payload.value == ["ok": true])
        #expect(received.first?.subscription === subscription)
    }

    @Test func opaquePayloadsPassThrough() {
        let (registry, _) = makeRegistry()
        final class LuaThing {}
        let thing = LuaThing()
        var got: AnyObject?
        registry.listen("x") { delivery in
            if case .opaque(let object) = delivery.payload { got = object }
        }
        registry.post("x", payload: .opaque(thing))
        registry.deliverPending()
        #expect(got === thing)
    }

    @Test func eventsWithoutSubscribersAreNotQueued() {
        let (registry, _) = makeRegistry()
        registry.post("nobody.listens")
        registry.post("x", event: "x", object: Counter().handle, payload: .value(.null))
        #expect(!registry.hasPending)
        var count = 0
        registry.listen("late") { _ in count += 1 }
        registry.deliverPending()
        #expect(count == 0, "posted before anyone listened")
    }

    @Test func onceForEvents() {
        let (registry, _) = makeRegistry()
        var count = 0
        let subscription = registry.listen("e", once: true) { _ in count += 1 }
        registry.post("e")
        registry.post("e")
        registry.drain()
        registry.post("e")
        registry.drain()
        #expect(count == 1)
        #expect(!subscription.isActive)
        #expect(registry.liveCount == 0)
    }

    @Test func objectScopedHandlersOnlyHearThatObject() {
        let (registry, _) = makeRegistry()
        let a = Counter(), b = Counter()
        let lines = Lines()
        registry.listen("counter.didTick", object: a) { _ in lines("scoped") }
        registry.listen("counter.didTick") { delivery in lines("global from \(delivery.object == a.handle ? "a" : delivery.object == nil ? "script" : "b")") }
        registry.post("counter.didTick", event: "didTick", object: a.handle, payload: .value(1))
        registry.post("counter.didTick", event: "didTick", object: b.handle, payload: .value(1))
        registry.post("counter.didTick", payload: .value(1))
        registry.deliverPending()
        #expect(lines.all == ["scoped", "global from a", "global from b", "global from script"])
    }

    @Test func objectScopedOnceIsNotUsedUpByOtherObjects() {
        let (registry, _) = makeRegistry()
        let a = Counter(), b = Counter()
        var count = 0
        let subscription = registry.listen("counter.didTick", object: a, once: true) { _ in count += 1 }
        registry.post("counter.didTick", event: "didTick", object: b.handle, payload: .value(1))
        registry.deliverPending()
        #expect(subscription.isActive)
        registry.post("counter.didTick", event: "didTick", object: a.handle, payload: .value(1))
        registry.deliverPending()
        #expect(count == 1)
        #expect(!subscription.isActive)
    }

    @Test func delegatesReceiveEveryEventOfTheirObjectByShortName() {
        let (registry, _) = makeRegistry()
        let a = Counter(), b = Counter()
        let bridgeA = ChangeLog(a), bridgeB = ChangeLog(b)
        var received: [EventDelivery] = []
        // A delivery holds its subscription, whose handler holds `received`: let go at the end.
        defer { received.removeAll() }
        let delegate = registry.onAllEvents(of: a.handle, site: "d.lua:1", owner: nil, handler: .event { received.append($0) })
        a.tick()
        guard case .immediate(let reset) = a.interface.method("reset")!.body else { return }
        _ = try? reset(a, Arguments([]))
        b.tick()
        bridgeA.forward(to: registry)
        bridgeB.forward(to: registry)
        registry.deliverPending()
        #expect(received.map(\.event) == ["didTick", "didReset"])
        #expect(received.map(\.name) == ["counter.didTick", "counter.didReset"])
        #expect(received.allSatisfy { $0.object == a.handle })
        #expect(received.first?.payload.value == 1)
        #expect(delegate.targetDescription == "delegate of counter")
        delegate.cancel()
        a.tick()
        bridgeA.forward(to: registry)
        #expect(!registry.hasPending, "no delegate and no handler left: nothing queued")
    }

    @Test func delegatesAndNamedHandlersRunInSubscriptionOrder() {
        let (registry, _) = makeRegistry()
        let a = Counter()
        let lines = Lines()
        registry.onAllEvents(of: a.handle, site: "", owner: nil, handler: .event { _ in lines("delegate") })
        registry.listen("counter.didTick") { _ in lines("handler") }
        registry.post("counter.didTick", event: "didTick", object: a.handle, payload: .value(1))
        registry.deliverPending()
        do {
            #expect(lines.all == ["delegate", "handler"])
        }
    }

    @Test func dispatchedHandlersGoThroughTheDispatcher() {
        let (registry, reports) = makeRegistry()
        let dispatcher = Dispatcher()
        registry.dispatcher = dispatcher
        let counter = Counter(count: 2)
        let property = registry.observe(counter.handle, key: "count", site: "s", owner: nil, token: 7, handler: .dispatched)
        let event = registry.on("e", site: "s", owner: nil, token: 8, handler: .dispatched)
        registry.onAllEvents(of: counter.handle, site: "s", owner: nil, token: 9, handler: .dispatched)
        #expect(property.token == 7 && event.token == 8)
        registry.deliverPending()
        registry.propertyChanged(counter.handle, key: "count", to: 3)
        registry.post("e")
        registry.post("counter.didTick", event: "didTick", object: counter.handle, payload: .value(3))
        registry.deliverPending()
        #expect(dispatcher.lines == ["property 7 count=2", "property 7 count=3", "event 8 e/e", "event 9 counter.didTick/didTick"])
        dispatcher.failWith = TestFailure()
        registry.post("e")
        registry.deliverPending()
        #expect(event.errors == 1, "a dispatcher that throws counts as a failing handler")
        #expect(reports.failures.count == 1)
        dispatcher.lines = []
        property.cancel()
        property.cancel()
        event.cancel()
        #expect(dispatcher.lines == ["ended 7", "ended 8"], "told once per subscription, to release its handler")
    }

    @Test func handlerSubscriptionsAreNotReportedToTheDispatcher() {
        let (registry, _) = makeRegistry()
        let dispatcher = Dispatcher()
        registry.dispatcher = dispatcher
        registry.listen("e") { _ in }.cancel()
        registry.watch(Counter(), "count") { _ in }.cancel()
        #expect(dispatcher.lines.isEmpty)
    }

    @Test func removeAllTellsTheDispatcherAboutEverySubscription() {
        let (registry, _) = makeRegistry()
        let dispatcher = Dispatcher()
        registry.dispatcher = dispatcher
        let counter = Counter()
        registry.on("e", site: "s", owner: nil, token: 1, handler: .dispatched)
        registry.observe(counter.handle, key: "count", site: "s", owner: nil, token: 2, handler: .dispatched)
        registry.onAllEvents(of: counter.handle, site: "s", owner: nil, token: 3, handler: .dispatched)
        registry.removeAll()
        #expect(dispatcher.lines == ["ended 1", "ended 2", "ended 3"])
        #expect(registry.liveCount == 0)
    }

    @Test func withoutADispatcherDispatchedDeliveriesAreDropped() {
        let (registry, reports) = makeRegistry()
        let dispatcher = Dispatcher()
        registry.dispatcher = dispatcher
        registry.dispatcher = nil // the owner clears it when it tears down
        let subscription = registry.on("e", site: "s", owner: nil, handler: .dispatched)
        registry.post("e")
        registry.deliverPending() // nobody to dispatch to: nothing happens, nothing crashes
        #expect(subscription.isActive)
        #expect(reports.all.isEmpty)
        #expect(dispatcher.lines.isEmpty)
    }
}
