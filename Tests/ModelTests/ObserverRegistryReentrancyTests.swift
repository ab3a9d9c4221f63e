import Model
import Testing

/// Handlers that cancel, subscribe, post and change while being dispatched; cycles.
@Suite struct ObserverRegistryReentrancyTests {
    @Test func cancelIsIdempotent() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let start = registry.liveCount
        let subscription = registry.watch(counter, "count") { _ in Issue.record("cancelled before the round") }
        #expect(subscription.isActive)
        #expect(registry.liveCount == start + 1)
        subscription.cancel()
        subscription.cancel()
        subscription.cancel()
        #expect(!subscription.isActive)
        #expect(registry.liveCount == start, "counted once")
        registry.drain()
    }

    @Test func handlerCancelsItself() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        var received: [Value] = []
        var laterRan = 0
        registry.watch(counter, "count", initial: false, coalesce: false) { change in
            received.append(change.new)
            change.subscription.cancel()
            change.subscription.cancel()
        }
        registry.watch(counter, "count", initial: false, coalesce: false) { _ in laterRan += 1 }
        for value in 1...3 { registry.propertyChanged(counter.handle, key: "count", to: .integer(Int64(value))) }
        registry.drain()
        #expect(received == [1], "nothing after its own cancel, even from the same batch")
        #expect(laterRan == 3, "the others keep running")
    }

    @Test func handlerCancelsALaterSubscriber() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let lines = Lines()
        var victim: Subscription?
        registry.watch(counter, "count", initial: false) { _ in
            lines("a")
            victim?.cancel()
        }
        victim = registry.watch(counter, "count", initial: false) { _ in lines("b") }
        registry.watch(counter, "count", initial: false) { _ in lines("c") }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.deliverPending()
        #expect(lines.all == ["a", "c"])
        #expect(victim?.deliveries == 0)
    }

    @Test func handlerCancelsALaterEventSubscriber() {
        let (registry, _) = makeRegistry()
        let lines = Lines()
        var victim: Subscription?
        registry.listen("e") { _ in
            lines("a")
            victim?.cancel()
        }
        victim = registry.listen("e") { _ in lines("b") }
        registry.post("e")
        registry.post("e")
        registry.deliverPending()
        #expect(lines.all == ["a", "a"])
    }

    @Test func handlerSubscribesANewHandlerThatWaitsForTheNextChange() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let lines = Lines()
        var added = false
        registry.watch(counter, "count", initial: false) { [unowned registry] _ in
            lines("a")
            guard !added else { return }
            added = true
            registry.watch(counter, "count", initial: false) { lines("new \($0.new.text)") }
        }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.deliverPending()
        #expect(lines.all == ["a"])
        #expect(!registry.hasPending)
        registry.propertyChanged(counter.handle, key: "count", to: 2)
        registry.deliverPending()
        #expect(lines.all == ["a", "a", "new 2"])
    }

    @Test func handlerSubscribesANewObserverWhoseInitialValueComesNextRound() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let lines = Lines()
        registry.listen("go", once: true) { [unowned registry] _ in
            registry.watch(counter, "count") { lines("new \($0.initial ? "initial " : "")\($0.new.text)") }
            lines("go")
        }
        registry.post("go")
        registry.deliverPending()
        #expect(lines.all == ["go"])
        #expect(registry.hasPending)
        registry.deliverPending()
        #expect(lines.all == ["go", "new initial 0"])
    }

    /// A handler subscribed during a round must not receive that round, even from a later item of it.
    @Test func newSubscriberDoesNotReceiveTheRestOfTheCurrentRound() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let lines = Lines()
        registry.listen("e", once: true) { [unowned registry] _ in
            lines("first")
            registry.listen("e") { _ in lines("new handler") }
            registry.watch(counter, "count") { lines("new observer \($0.initial ? "initial " : "")\($0.new.text)") }
        }
        registry.post("e")
        registry.post("e")
        registry.watch(counter, "count", initial: false) { _ in }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.deliverPending()
        do {
            #expect(lines.all == ["first"])
        }
        registry.deliverPending()
        do {
            #expect(lines.all == ["first", "new observer initial 1"])
        }
    }

    @Test func changesMadeByHandlersAreDeliveredNextRoundNotReentrantly() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        let lines = Lines()
        registry.listen("a") { [unowned registry] _ in
            lines("a begins")
            registry.post("b")
            registry.propertyChanged(counter.handle, key: "count", to: 1)
            registry.deliverPending() // ignored: a round is under way
            lines("a ends")
        }
        registry.listen("b") { _ in lines("b") }
        registry.watch(counter, "count", initial: false) { lines("count \($0.new.text)") }
        registry.post("a")
        registry.deliverPending()
        #expect(lines.all == ["a begins", "a ends"])
        #expect(registry.hasPending)
        registry.deliverPending()
        #expect(lines.all == ["a begins", "a ends", "b", "count 1"])
        #expect(!registry.hasPending)
    }

    @Test func propertyChangedByItsOwnObserverIsDeliveredNextRound() {
        let (registry, reports) = makeRegistry()
        let counter = Counter()
        var seen: [String] = []
        registry.watch(counter, "count", initial: false) { [unowned registry] change in
            seen.append("\(change.old!.text)->\(change.new.text)")
            let value = change.new.integerValue!
            if value < 3 { registry.propertyChanged(counter.handle, key: "count", to: .integer(value + 1)) }
        }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        #expect(registry.drain() == 3)
        #expect(seen == ["0->1", "1->2", "2->3"], "each delivered once, in order")
        #expect(reports.all.isEmpty)
    }

    @Test func aRepostingHandlerIsReportedAsACycleAndStops() {
        let (registry, reports) = makeRegistry(maxChainedRounds: 5)
        var runs = 0
        registry.listen("ping") { [unowned registry] _ in
            runs += 1
            registry.post("ping")
        }
        registry.post("ping")
        let rounds = registry.drain()
        #expect(runs == 5, "rounds 0...4 run; the 5th chained round is dropped")
        #expect(rounds == 6)
        #expect(reports.cycles == ["ping"])
        #expect(!registry.hasPending)
        // The chain is over: the next post starts afresh.
        registry.post("ping")
        registry.drain()
        #expect(runs == 10)
        #expect(reports.cycles == ["ping", "ping"])
    }

    @Test func aCycleDropsOnlyItsOwnChain() {
        let (registry, reports) = makeRegistry(maxChainedRounds: 3)
        let lines = Lines()
        registry.listen("ping") { [unowned registry] _ in registry.post("ping") }
        registry.listen("service.didUpdate") { _ in lines("update") }
        registry.post("ping")
        for _ in 0..<3 { registry.deliverPending() }
        registry.post("service.didUpdate") // arrives from a service while the script spins
        registry.deliverPending()
        #expect(reports.cycles.count == 1)
        registry.drain()
        do {
            #expect(lines.all == ["update"])
        }
    }

    @Test func aOnceHandlerThatPostsItsOwnEventReceivesItOnce() {
        let (registry, reports) = makeRegistry()
        var runs = 0
        registry.listen("e", once: true) { [unowned registry] _ in
            runs += 1
            registry.post("e")
        }
        registry.post("e")
        registry.drain()
        #expect(runs == 1)
        #expect(reports.all.isEmpty)
    }

    @Test func defaultCycleLimitIsOneHundredRounds() {
        let (registry, reports) = makeRegistry()
        #expect(registry.maxChainedRounds == 100)
        let counter = Counter()
        var runs = 0
        registry.watch(counter, "count", initial: false) { [unowned registry] change in
            runs += 1
            registry.propertyChanged(counter.handle, key: "count", to: .integer(change.new.integerValue! + 1))
        }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.drain()
        #expect(runs == 100)
        #expect(reports.cycles == ["counter.count"])
    }

    @Test func shortChainsAreNotCycles() {
        let (registry, reports) = makeRegistry(maxChainedRounds: 5)
        var depth = 0
        registry.listen("step") { [unowned registry] delivery in
            depth += 1
            let left = delivery.payload.value?.integerValue ?? 0
            if left > 0 { registry.post("step", .integer(left - 1)) }
        }
        for _ in 0..<3 {
            registry.post("step", 4) // five rounds: 4, 3, 2, 1, 0
            registry.drain()
        }
        #expect(depth == 15)
        #expect(reports.cycles.isEmpty, "a quiet round resets the chain")
    }

    @Test func nothingIsDeliveredTwiceUnderChurn() {
        let (registry, _) = makeRegistry()
        let counter = Counter()
        var deliveries: [Int: [Value]] = [:]
        var subscriptions: [Subscription] = []
        var random = SeededGenerator(seed: 7)
        func subscribe() {
            var me: Subscription!
            me = registry.watch(counter, "count", initial: false, coalesce: false) { change in
                deliveries[me.id, default: []].append(change.new)
                switch Int.random(in: 0..<6, using: &random) {
                case 0: change.subscription.cancel()
                case 1: subscriptions.randomElement(using: &random)?.cancel()
                case 2: subscribe()
                default: break
                }
            }
            subscriptions.append(me)
        }
        for _ in 0..<20 { subscribe() }
        for value in 1...200 {
            registry.propertyChanged(counter.handle, key: "count", to: .integer(Int64(value)))
            if value % 3 == 0 { registry.drain() }
        }
        registry.drain()
        for (id, values) in deliveries {
            #expect(Set(values).count == values.count, "subscription \(id) received a value twice")
            #expect(values == values.sorted(by: { $0.integerValue! < $1.integerValue! }), "subscription \(id) out of order")
        }
        #expect(registry.liveCount == subscriptions.filter(\.isActive).count)
    }
}
