import Model
import Testing

/// Introspection, ownership by scopes, counts returning to their start, removeAll.
@Suite struct ObserverRegistryLifetimeTests {
    @Test func subscriptionsListsLiveOnesInSubscriptionOrder() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let script = Scope(name: "script")
        let tracker = Scope(name: "Tracker")
        let observe = registry.watch(counter, "count", owner: script, site: "main.lua:3") { _ in throw TestFailure() }
        let event = registry.listen("counter.didTick", owner: tracker, site: "tracker.lua:9") { _ in }
        let gone = registry.listen("x") { _ in }
        let delegate = registry.onAllEvents(of: counter.handle, site: "main.lua:5", owner: nil, handler: .event { _ in })
        let label = registry.watch(counter, "label", site: "main.lua:7") { _ in }
        gone.cancel()
        let listed = registry.subscriptions
        #expect(listed.map(\.id) == [observe.id, event.id, delegate.id, label.id])
        #expect(listed.map(\.targetDescription) == ["counter.count", "on counter.didTick", "delegate of counter", "counter.label"])
        #expect(listed.map(\.ownerName) == ["script", "Tracker", "-", "-"])
        #expect(listed.map(\.site) == ["main.lua:3", "tracker.lua:9", "main.lua:5", "main.lua:7"])
        #expect(listed.allSatisfy { $0.deliveries == 0 && $0.errors == 0 })
        #expect(observe.id < event.id && event.id < gone.id, "ids grow")
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.post("counter.didTick", event: "didTick", object: counter.handle, payload: .value(1))
        registry.deliverPending()
        #expect(observe.deliveries == 2 && observe.errors == 2, "initial and change, both failed")
        #expect(event.deliveries == 1 && event.errors == 0)
        #expect(delegate.deliveries == 1)
        #expect(label.deliveries == 1)
        #expect(observe.owner === script)
    }

    @Test func subscriptionsAreAdoptedByTheirOwner() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let owner = Scope(name: "Tracker")
        let a = registry.watch(counter, "count", owner: owner) { _ in }
        let b = registry.listen("e", owner: owner) { _ in }
        let c = registry.onAllEvents(of: counter.handle, site: "", owner: owner, handler: .event { _ in })
        #expect(owner.count == 3)
        #expect([a, b, c].map(\.ownerSlot) == [0, 1, 2])
        b.cancel()
        #expect(owner.count == 2, "a cancelled subscription leaves its owner")
        #expect(b.ownerSlot == -1)
        #expect(c.ownerSlot == 1)
    }

    @Test func endingTheOwnerCancelsItsSubscriptions() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let owner = Scope(name: "Tracker")
        let other = Scope(name: "script")
        var received = 0
        let start = registry.liveCount
        let mine = (0..<3).map { _ in registry.watch(counter, "count", initial: false, owner: owner) { _ in received += 1 } }
        let minesEvent = registry.listen("e", owner: owner) { _ in received += 1 }
        let theirs = registry.watch(counter, "count", initial: false, owner: other) { _ in received += 100 }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.post("e")
        owner.end() // before the round: a controller that is gone never receives anything
        registry.deliverPending()
        #expect(received == 100)
        #expect(mine.allSatisfy { !$0.isActive })
        #expect(!minesEvent.isActive)
        #expect(theirs.isActive)
        #expect(registry.liveCount == start + 1)
        #expect(owner.count == 0)
    }

    @Test func ownerEndedByAHandlerStopsTheRestOfTheRound() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let owner = Scope(name: "Tracker")
        let lines = Lines()
        registry.watch(counter, "count", initial: false) { _ in
            lines("script")
            owner.end()
        }
        registry.watch(counter, "count", initial: false, owner: owner) { _ in lines("controller") }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.deliverPending()
        #expect(lines.all == ["script"])
    }

    @Test func subscribingWithAnEndedOwnerCancelsAtOnceAndLeavesOthersAlone() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let ended = Scope(name: "gone")
        ended.end()
        var live = 0
        let existing = registry.watch(counter, "count", initial: false) { _ in live += 1 }
        let start = registry.liveCount
        let late = registry.watch(counter, "count", owner: ended) { _ in Issue.record("an ended owner never receives") }
        #expect(!late.isActive)
        #expect(registry.liveCount == start)
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.drain()
        do {
            #expect(live == 1)
            #expect(registry.subscriptions.map(\.id) == [existing.id])
        }
    }

    @Test func anObserverOfAnEndedOwnerOnAFreshKeyLeavesNothingBehind() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let ended = Scope(name: "gone")
        ended.end()
        let late = registry.watch(counter, "count", owner: ended) { _ in }
        registry.drain()
        #expect(!late.isActive)
        do {
            #expect(registry.currentValue(of: counter.handle, key: "count") == nil)
        }
    }

    @Test func aValueChangedWhileNobodyObservedIsReadAfresh() {
        let (registry, _) = makeRegistry()
        let counter = Counter(count: 1)
        let bridge = ChangeLog(counter)
        let first = registry.watch(counter, "count", initial: false) { _ in }
        counter.count.set(2)
        bridge.forward(to: registry)
        first.cancel() // the last observer leaves while a change is pending
        registry.drain()
        do {
            #expect(registry.currentValue(of: counter.handle, key: "count") == nil, "nobody observes it")
        }
        counter.count.set(3)
        bridge.forward(to: registry) // ignored: nobody observes
        var initial: Value?
        registry.watch(counter, "count") { initial = $0.new }
        registry.drain()
        do {
            #expect(initial == 3)
        }
    }

    @Test func lastObserverLeavingForgetsTheValue() {
        let (registry, _) = makeRegistry()
        let counter = Counter(count: 1)
        let a = registry.watch(counter, "count") { _ in }
        let b = registry.watch(counter, "count") { _ in }
        #expect(registry.currentValue(of: counter.handle, key: "count") == 1)
        a.cancel()
        #expect(registry.currentValue(of: counter.handle, key: "count") == 1)
        b.cancel()
        #expect(registry.currentValue(of: counter.handle, key: "count") == nil)
        counter.count.set(5)
        var initial: Value?
        registry.watch(counter, "count") { initial = $0.new }
        registry.drain()
        #expect(initial == 5)
    }

    @Test func removeAllCancelsEverythingAndDropsWhatIsPending() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let owner = Scope(name: "script")
        var received = 0
        let all = [
            registry.watch(counter, "count", owner: owner) { _ in received += 1 },
            registry.listen("e", owner: owner) { _ in received += 1 },
            registry.onAllEvents(of: counter.handle, site: "", owner: nil, handler: .event { _ in received += 1 }),
        ]
        registry.post("e")
        registry.removeAll()
        #expect(!registry.hasPending)
        registry.deliverPending()
        #expect(received == 0)
        #expect(all.allSatisfy { !$0.isActive })
        #expect(registry.liveCount == 0)
        #expect(registry.subscriptions.isEmpty)
        #expect(owner.count == 0)
        #expect(registry.currentValue(of: counter.handle, key: "count") == nil)
        // Still usable afterwards.
        registry.listen("e") { _ in received += 1 }
        registry.post("e")
        registry.deliverPending()
        #expect(received == 1)
    }

    @Test func liveCountReturnsToItsStartAfterAMillionObserveCancelCycles() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let handle = counter.handle
        let keep = registry.watch(counter, "label", initial: false) { _ in }
        let start = registry.liveCount
        for index in 0..<1_000_000 {
            let subscription: Subscription
            switch index % 4 {
            case 0: subscription = registry.observe(handle, key: "count", initial: false, site: "loop.lua:1", owner: nil, handler: .property { _ in })
            case 1: subscription = registry.observe(handle, key: "label", initial: false, site: "loop.lua:2", owner: nil, handler: .property { _ in })
            case 2: subscription = registry.on("e", site: "loop.lua:3", owner: nil, handler: .event { _ in })
            default: subscription = registry.onAllEvents(of: handle, site: "loop.lua:4", owner: nil, handler: .event { _ in })
            }
            subscription.cancel()
        }
        #expect(registry.liveCount == start)
        #expect(registry.subscriptions.map(\.id) == [keep.id])
        #expect(!registry.hasPending)
        #expect(registry.currentValue(of: handle, key: "count") == nil)
    }

    @Test(arguments: [false, true])
    func aHundredThousandLiveSubscriptionsCancelInLinearTime(reversed: Bool) {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let owner = Scope(name: "script")
        let start = registry.liveCount
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            var subscriptions: [Subscription] = []
            subscriptions.reserveCapacity(100_000)
            for index in 0..<100_000 {
                subscriptions.append(index.isMultiple(of: 2)
                    ? registry.observe(counter.handle, key: "count", initial: false, site: "s", owner: owner, handler: .property { _ in })
                    : registry.on("e", site: "s", owner: owner, handler: .event { _ in }))
            }
            #expect(registry.liveCount == start + 100_000)
            #expect(owner.count == 100_000)
            if reversed { subscriptions.reverse() }
            for subscription in subscriptions { subscription.cancel() }
        }
        #expect(registry.liveCount == start)
        #expect(owner.count == 0)
        #expect(registry.subscriptions.isEmpty)
        // Timed in plain builds only (see ``Sanitizer``).
        if Sanitizer.active == nil {
            #expect(elapsed < .seconds(3), "cancelling must not be quadratic (took \(elapsed))")
        }
    }

    @Test func cancelledSubscribersInterleavedWithLiveOnesStillDeliverInOrder() {
        let (registry, _) = makeRegistry()
        var order: [Int] = []
        let subscriptions = (0..<200).map { index in registry.listen("e") { _ in order.append(index) } }
        for (index, subscription) in subscriptions.enumerated() where !index.isMultiple(of: 3) { subscription.cancel() }
        registry.post("e")
        registry.deliverPending()
        #expect(order == Array(stride(from: 0, to: 200, by: 3)), "compaction keeps FIFO order")
        #expect(registry.liveCount == order.count)
    }

    @Test func endingAnOwnerOfManySubscriptionsIsFast() {
        let (registry, _) = makeRegistry()
        let owner = Scope(name: "Tracker")
        for _ in 0..<100_000 { registry.listen("e", owner: owner) { _ in } }
        let elapsed = ContinuousClock().measure { owner.end() }
        #expect(registry.liveCount == 0)
        // Timed in plain builds only (see ``Sanitizer``).
        if Sanitizer.active == nil { #expect(elapsed < .seconds(3)) }
    }
}
