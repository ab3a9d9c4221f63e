import Model
import Testing

/// Property observation: initial deliveries, FIFO order, coalescing, `once`.
@Suite struct ObserverRegistryDeliveryTests {
    @Test func initialValueArrivesOnTheNextRoundNotSynchronously() {
        let (registry, _) = makeRegistry()
        let counter = Counter(count: 5)
        var received: [PropertyChange] = []
        // A delivery holds its subscription, whose handler holds `received`: let go at the end.
        defer { received.removeAll() }
        let subscription = registry.watch(counter, "count") { received.append($0) }
        #expect(received.isEmpty, "never inside observe")
        #expect(registry.hasPending)
        registry.deliverPending()
        #expect(received.count == 1)
        let change = received[0]
        #expect(change.initial)
        #expect(change.new == 5)
        #expect(change.old == nil)
        #expect(change.coalesced == 0)
        #expect(change.key == "count")
        #expect(change.object == counter.handle)
        #expect(change.subscription === subscription)
        #expect(!registry.hasPending)
        registry.deliverPending()
        #expect(received.count == 1, "the initial value is delivered once")
    }

    @Test func initialFalseDeliversOnlyChanges() {
        let (registry, _) = makeRegistry()
        let counter = Counter(count: 5)
        var received: [PropertyChange] = []
        // A delivery holds its subscription, whose handler holds `received`: let go at the end.
        defer { received.removeAll() }
        registry.watch(counter, "count", initial: false) { received.append($0) }
        #expect(!registry.hasPending)
        registry.deliverPending()
        #expect(received.isEmpty)
        registry.propertyChanged(counter.handle, key: "count", to: 6)
        registry.deliverPending()
        #expect(received.map(\.new) == [6])
        #expect(received.map(\.old) == [5])
        #expect(received.map(\.initial) == [false])
        #expect(received.map(\.coalesced) == [1])
    }

    @Test func initialValueOfAnOptionalAndOfAnUnknownKey() {
        let (registry, _) = makeRegistry()
        let counter = Counter(label: nil)
        var values: [Value] = []
        registry.watch(counter, "label") { values.append($0.new) }
        registry.watch(counter, "nope") { values.append($0.new) }
        registry.deliverPending()
        #expect(values == [.null, .null])
    }

    @Test func changesAreQueuedUntilTheRound() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let lines = Lines()
        registry.watch(counter, "count", initial: false) { lines("got \($0.new.text)") }
        lines("before")
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        lines("after")
        registry.deliverPending()
        #expect(lines.all == ["before", "after", "got 1"], "never inside the code that made the change")
    }

    @Test func subscribersRunInSubscriptionOrder() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let lines = Lines()
        for name in ["a", "b", "c", "d"] {
            registry.watch(counter, "count") { lines("\(name)\($0.initial ? "*" : ""):\($0.new.text)") }
        }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.deliverPending()
        #expect(lines.all == ["a*:0", "b*:0", "c*:0", "d*:0", "a:1", "b:1", "c:1", "d:1"])
    }

    @Test func queuedItemsOfOneRoundRunInArrivalOrder() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let lines = Lines()
        registry.watch(counter, "count", initial: false) { lines("count \($0.new.text)") }
        registry.watch(counter, "label", initial: false) { lines("label \($0.new.text)") }
        registry.listen("tick") { _ in lines("tick") }
        registry.propertyChanged(counter.handle, key: "label", to: "x")
        registry.post("tick")
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.propertyChanged(counter.handle, key: "label", to: "y") // folds into the first label item
        registry.deliverPending()
        #expect(lines.all == ["label y", "tick", "count 1"])
    }

    @Test func changesInOneRoundAreCoalesced() {
        let (registry, _) = makeRegistry()
        let counter = Counter(count: 10)
        var received: [PropertyChange] = []
        // A delivery holds its subscription, whose handler holds `received`: let go at the end.
        defer { received.removeAll() }
        registry.watch(counter, "count", initial: false) { received.append($0) }
        for value in [11, 12, 13] { registry.propertyChanged(counter.handle, key: "count", to: .integer(Int64(value))) }
        registry.deliverPending()
        #expect(received.count == 1)
        #expect(received.first?.new == 13, "last value wins")
        #expect(received.first?.old == 10, "old is the value before the first change")
        #expect(received.first?.coalesced == 3)
        #expect(received.first?.initial == false)
        registry.propertyChanged(counter.handle, key: "count", to: 14)
        registry.deliverPending()
        #expect(received.map(\.old) == [10, 13], "the next round starts from the last delivered value")
        #expect(received.map(\.coalesced) == [3, 1])
        #expect(registry.currentValue(of: counter.handle, key: "count") == 14)
    }

    @Test func coalesceFalseDeliversEveryChangeInOrder() {
        let (registry, _) = makeRegistry()
        let counter = Counter(count: 10)
        var received: [PropertyChange] = []
        // A delivery holds its subscription, whose handler holds `received`: let go at the end.
        defer { received.removeAll() }
        registry.watch(counter, "count", initial: false, coalesce: false) { received.append($0) }
        for value in [11, 12, 13] { registry.propertyChanged(counter.handle, key: "count", to: .integer(Int64(value))) }
        registry.deliverPending()
        #expect(received.map(\.new) == [11, 12, 13])
        #expect(received.map(\.old) == [10, 11, 12])
        #expect(received.map(\.coalesced) == [1, 1, 1])
    }

    @Test func coalescingAndNonCoalescingSubscribersShareARound() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let lines = Lines()
        registry.watch(counter, "count", initial: false, coalesce: false) { lines("every \($0.old!.text)->\($0.new.text)") }
        registry.watch(counter, "count", initial: false) { lines("last \($0.old!.text)->\($0.new.text) x\($0.coalesced)") }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.propertyChanged(counter.handle, key: "count", to: 2)
        registry.deliverPending()
        #expect(lines.all == ["every 0->1", "every 1->2", "last 0->2 x2"])
    }

    @Test func initialThenChangeInTheSameRound() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        var received: [PropertyChange] = []
        // A delivery holds its subscription, whose handler holds `received`: let go at the end.
        defer { received.removeAll() }
        registry.watch(counter, "count") { received.append($0) }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.deliverPending()
        #expect(received.map(\.initial) == [true, false])
        #expect(received.map(\.new) == [0, 1])
        #expect(received.map(\.old) == [nil, 0])
    }

    @Test func onceDeliversOneAndCancels() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        var received: [Value] = []
        let start = registry.liveCount
        let subscription = registry.watch(counter, "count", once: true) { received.append($0.new) }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.deliverPending()
        #expect(received == [0], "the initial delivery is the one")
        #expect(!subscription.isActive)
        #expect(registry.liveCount == start)
        #expect(subscription.deliveries == 1)
    }

    @Test func onceWithoutCoalescingDeliversOnlyTheFirstChange() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        var received: [Value] = []
        registry.watch(counter, "count", initial: false, coalesce: false, once: true) { received.append($0.new) }
        for value in 1...3 { registry.propertyChanged(counter.handle, key: "count", to: .integer(Int64(value))) }
        registry.drain()
        #expect(received == [1])
    }

    @Test func changesToUnobservedPropertiesAreIgnored() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        #expect(!registry.hasPending)
        #expect(registry.currentValue(of: counter.handle, key: "count") == nil)
        var received: [Value] = []
        registry.watch(counter, "label", initial: false) { received.append($0.new) }
        registry.propertyChanged(counter.handle, key: "count", to: 2)
        registry.propertyChanged(Counter().handle, key: "label", to: "other object")
        #expect(!registry.hasPending)
        registry.deliverPending()
        #expect(received.isEmpty)
    }

    @Test func deliverPendingWithNothingQueuedDoesNothing() {
        let (registry, reports) = makeRegistry()
        for _ in 0..<200 { registry.deliverPending() }
        #expect(reports.all.isEmpty)
        #expect(registry.liveCount == 0)
    }

    @Test func endToEndFromTheServicePublisher() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let bridge = ChangeLog(counter)
        let lines = Lines()
        registry.watch(counter, "count") { lines("count \($0.old?.text ?? "-")->\($0.new.text) x\($0.coalesced)") }
        registry.listen("counter.didTick") { lines("tick \($0.payload.value?.text ?? "?")") }
        registry.deliverPending()
        counter.tick()
        counter.tick()
        bridge.forward(to: registry)
        registry.deliverPending()
        #expect(lines.all == ["count -->0 x0", "count 0->2 x2", "tick 1", "tick 2"])
    }
}
