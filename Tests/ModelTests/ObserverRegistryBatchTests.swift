import Model
import Testing

/// Events posted as one batch (``ObserverRegistry/post(_:event:object:payloads:)``, the lines of
/// one read of a program's output) are delivered as the same events posted one by one would be.
@Suite struct ObserverRegistryBatchTests {
    @Test func aBatchIsDeliveredInOrderToEverySubscriberAsOneQueueEntry() {
        let (registry, _) = makeRegistry()
        let object = Counter()
        var heard: [String] = []
        registry.listen("counter.didLine", object: object) { heard.append("a\($0.payload.value?.integerValue ?? -1)") }
        registry.listen("counter.didLine", object: object) { heard.append("b\($0.payload.value?.integerValue ?? -1)") }
        registry.post("counter.didLine", event: "didLine", object: object.handle, payloads: [1, 2, 3])
        registry.post("counter.didLine", event: "didLine", object: object.handle, payloads: [])
        #expect(registry.hasPending)
        registry.deliverPending()
        #expect(heard == ["a1", "b1", "a2", "b2", "a3", "b3"], "each event to every subscriber, in subscription order, then the next")
        #expect(!registry.hasPending)
    }

    @Test func aSubscriptionMadeDuringABatchHearsNoneOfItAndOneCancelledStops() {
        let (registry, _) = makeRegistry()
        let object = Counter()
        var heard: [String] = []
        var late: Subscription?
        var second: Subscription?
        // Its handler holds the registry, which holds the subscription: cancelled at the end,
        // which lets the handler go (kept, LeakSanitizer reports the cycle).
        let first = registry.listen("counter.didLine", object: object) { delivery in
            let number = delivery.payload.value?.integerValue ?? -1
            heard.append("first\(number)")
            if number == 1 {
                late = registry.listen("counter.didLine", object: object) { heard.append("late\($0.payload.value?.integerValue ?? -1)") }
            }
            if number == 2 { second?.cancel() }
        }
        second = registry.listen("counter.didLine", object: object) { heard.append("second\($0.payload.value?.integerValue ?? -1)") }
        registry.post("counter.didLine", event: "didLine", object: object.handle, payloads: [1, 2, 3])
        registry.deliverPending()
        #expect(heard == ["first1", "second1", "first2", "first3"])
        // Events posted after the batch reach the late subscription.
        heard.removeAll()
        registry.post("counter.didLine", event: "didLine", object: object.handle, payloads: [4])
        registry.deliverPending()
        #expect(heard == ["first4", "late4"])
        late?.cancel()
        first.cancel()
    }

    @Test func aBatchWithoutSubscribersIsNotQueued() {
        let (registry, _) = makeRegistry()
        registry.post("counter.didLine", event: "didLine", object: Counter().handle, payloads: [1, 2])
        #expect(!registry.hasPending)
    }
}
