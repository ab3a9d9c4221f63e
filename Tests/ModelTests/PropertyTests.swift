import Model
import Synchronization
import Testing

@Suite struct PropertyTests {
    @Test func readsItsValue() {
        let publisher = ChangePublisher()
        let count = Property("count", 3, publisher)
        let label = Property<String?>("label", nil, publisher)
        #expect(count.key == "count")
        #expect(count.value == 3)
        #expect(label.value == nil)
    }

    @Test func setPublishesToTheSink() {
        let counter = Counter()
        let log = ChangeLog(counter)
        counter.count.set(5)
        counter.label.set("five")
        counter.label.set(nil)
        #expect(counter.count.value == 5)
        #expect(log.take().map(\.text) == ["count=5", "label=five", "label=nil"])
    }

    @Test func setPublishesEvenWhenTheValueIsUnchanged() {
        let counter = Counter(count: 1)
        let log = ChangeLog(counter)
        counter.count.set(1)
        #expect(log.take().map(\.text) == ["count=1"], "every set is a report; the registry decides what to deliver")
    }

    @Test func updateChangesInPlaceAndReturnsTheResult() {
        let counter = Counter(count: 10)
        let log = ChangeLog(counter)
        let doubled = counter.count.update { count -> Int in
            count *= 2
            return count + 1
        }
        #expect(doubled == 21)
        #expect(counter.count.value == 20)
        #expect(log.take().map(\.text) == ["count=20"])
    }

    @Test func updateThatThrowsKeepsTheValueAndReportsNothing() {
        let counter = Counter(count: 10)
        let log = ChangeLog(counter)
        #expect(throws: TestFailure.self) {
            try counter.count.update { count in
                count = 99
                throw TestFailure()
            }
        }
        #expect(log.take().isEmpty)
        do {
            #expect(counter.count.value == 10)
        }
    }

    @Test func everyAttachedSinkReceivesInAttachOrder() {
        let publisher = ChangePublisher()
        let seen = Mutex<[String]>([])
        publisher.attach { change in seen.withLock { $0.append("a:\(change.text)") } }
        publisher.attach { change in seen.withLock { $0.append("b:\(change.text)") } }
        publisher.propertyChanged("x", to: 1)
        publisher.emit("ping")
        publisher.emit("pong", "payload")
        #expect(seen.withLock { $0 } == ["a:x=1", "b:x=1", "a:ping(nil)", "b:ping(nil)", "a:pong(payload)", "b:pong(payload)"])
    }

    @Test func detachStopsDelivery() {
        let counter = Counter()
        let first = ChangeLog(counter)
        let second = ChangeLog(counter)
        #expect(first.sinkID != second.sinkID)
        counter.count.set(1)
        counter.changes.detach(first.sinkID)
        counter.count.set(2)
        counter.changes.detach(first.sinkID) // twice is harmless
        counter.changes.detach(12_345) // unknown ids too
        #expect(first.take().map(\.text) == ["count=1"])
        #expect(second.take().map(\.text) == ["count=1", "count=2"])
        counter.changes.detach(second.sinkID)
        counter.tick()
        #expect(second.take().isEmpty)
        #expect(counter.count.value == 3, "with no sink attached reports are dropped, values still change")
    }

    @Test func noSinkMeansNothingHappens() {
        let counter = Counter()
        counter.count.set(4)
        counter.changes.emit("didTick", 4)
        #expect(counter.count.value == 4)
    }

    /// Increments from several tasks: the reports must come as 1, 2, 3 … and the last one must carry
    /// the final value, or observers apply changes out of order and end on a stale value.
    @Test func concurrentUpdatesReportInOrder() async {
        do {
            for round in 0..<100 {
                let counter = Counter()
                let log = ChangeLog(counter)
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<4 {
                        group.addTask { for _ in 0..<250 { counter.count.update { $0 += 1 } } }
                    }
                }
                let reported = log.take().compactMap { change -> Int? in
                    if case .property(_, let value) = change { Int(value: value) } else { nil }
                }
                if reported != Array(1...1_000) {
                    #expect(reported == Array(1...1_000), "round \(round): reports out of order")
                    #expect(reported.last == counter.count.value, "round \(round): the last report is stale")
                    break // one witness is enough
                }
            }
        }
    }

    @Test func concurrentUpdatesAreAtomic() async {
        let counter = Counter()
        let log = ChangeLog(counter)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<1_000 { counter.count.update { $0 += 1 } } }
            }
        }
        #expect(counter.count.value == 8_000)
        let reports = log.take()
        #expect(reports.count == 8_000)
        let values = Set(reports.compactMap { change -> Int? in
            if case .property(_, let value) = change { Int(value: value) } else { nil }
        })
        #expect(values == Set(1...8_000), "each update reports the value it produced")
    }
}
