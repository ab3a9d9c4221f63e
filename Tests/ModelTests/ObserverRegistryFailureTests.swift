import Model
import Testing

/// Handlers that throw: the others keep running, errors are counted, auto-cancel after 10.
@Suite struct ObserverRegistryFailureTests {
    @Test func aThrowingHandlerDoesNotStopTheOthers() {
        let (registry, reports) = makeRegistry()
        let counter = Counter()
        let lines = Lines()
        registry.watch(counter, "count", initial: false) { _ in lines("a") }
        let failing = registry.watch(counter, "count", initial: false, site: "bad.lua:3") { _ in
            lines("b")
            throw TestFailure()
        }
        registry.watch(counter, "count", initial: false) { _ in lines("c") }
        registry.propertyChanged(counter.handle, key: "count", to: 1)
        registry.deliverPending()
        #expect(lines.all == ["a", "b", "c"])
        #expect(failing.errors == 1)
        #expect(failing.deliveries == 1)
        #expect(failing.isActive)
        #expect(reports.failures.map(\.id) == [failing.id])
        guard case .handlerFailed(let subscription, let error)? = reports.all.first else {
            Issue.record("a handlerFailed report")
            return
        }
        #expect(subscription.site == "bad.lua:3", "the report can name where the subscription was made")
        #expect(error is TestFailure)
    }

    @Test func aThrowingEventHandlerDoesNotStopTheOthers() {
        let (registry, reports) = makeRegistry()
        let lines = Lines()
        registry.listen("e") { _ in throw TestFailure() }
        registry.listen("e") { delivery in lines("ok \(delivery.payload.value!.text)") }
        registry.post("e", 1)
        registry.post("e", 2)
        registry.deliverPending()
        #expect(lines.all == ["ok 1", "ok 2"])
        #expect(reports.failures.count == 2)
    }

    @Test func tenConsecutiveFailuresCancelWithAReport() {
        let (registry, reports) = makeRegistry()
        #expect(registry.maxFailures == 10)
        var healthy = 0
        let start = registry.liveCount
        let failing = registry.listen("e") { _ in throw TestFailure() }
        registry.listen("e") { _ in healthy += 1 }
        for _ in 0..<12 { registry.post("e") }
        registry.deliverPending()
        #expect(failing.errors == 10)
        #expect(failing.deliveries == 10)
        #expect(!failing.isActive)
        #expect(healthy == 12)
        #expect(reports.failures.count == 10)
        #expect(reports.autoCancelled.map(\.id) == [failing.id])
        guard case .autoCancelled? = reports.all.last else {
            Issue.record("the auto-cancel report comes after the tenth failure")
            return
        }
        #expect(registry.liveCount == start + 1)
        #expect(!registry.subscriptions.contains { $0 === failing })
    }

    @Test func failuresAcrossRoundsCountToo() {
        let (registry, reports) = makeRegistry()
        let counter = Counter()
        let failing = registry.watch(counter, "count") { _ in throw TestFailure() }
        registry.deliverPending() // the initial delivery fails: 1
        for value in 1...20 {
            registry.propertyChanged(counter.handle, key: "count", to: .integer(Int64(value)))
            registry.deliverPending()
        }
        #expect(failing.errors == 10)
        #expect(!failing.isActive)
        #expect(reports.autoCancelled.count == 1)
    }

    @Test func aSuccessResetsTheConsecutiveCount() {
        let (registry, reports) = makeRegistry()
        let failing = registry.listen("e") { delivery in
            if delivery.payload.value == "fail" { throw TestFailure() }
        }
        for _ in 0..<9 { registry.post("e", "fail") }
        registry.post("e", "ok")
        for _ in 0..<9 { registry.post("e", "fail") }
        registry.deliverPending()
        #expect(failing.isActive, "never 10 in a row")
        #expect(failing.errors == 18, "errors counts them all")
        #expect(failing.deliveries == 19)
        #expect(reports.autoCancelled.isEmpty)
        registry.post("e", "fail")
        registry.deliverPending()
        #expect(!failing.isActive)
        #expect(reports.autoCancelled.count == 1)
    }

    @Test func maxFailuresIsConfigurable() {
        let (registry, reports) = makeRegistry(maxFailures: 2)
        let failing = registry.listen("e") { _ in throw TestFailure() }
        for _ in 0..<5 { registry.post("e") }
        registry.deliverPending()
        #expect(failing.errors == 2)
        #expect(reports.autoCancelled.count == 1)
    }

    @Test func aFailingOnceHandlerIsCancelledWithoutAnAutoCancelReport() {
        let (registry, reports) = makeRegistry()
        let failing = registry.listen("e", once: true) { _ in throw TestFailure() }
        registry.post("e")
        registry.post("e")
        registry.deliverPending()
        #expect(!failing.isActive)
        #expect(failing.errors == 1)
        #expect(reports.failures.count == 1)
        #expect(reports.autoCancelled.isEmpty, "it was already cancelled by once")
    }

    @Test func aHandlerThatCancelsItselfThenThrowsIsNotReportedAsAutoCancelled() {
        let (registry, reports) = makeRegistry(maxFailures: 1)
        registry.listen("e") { delivery in
            delivery.subscription.cancel()
            throw TestFailure()
        }
        registry.post("e")
        registry.deliverPending()
        #expect(reports.failures.count == 1)
        #expect(reports.autoCancelled.isEmpty)
    }
}
