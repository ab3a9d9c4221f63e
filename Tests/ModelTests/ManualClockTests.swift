import Model
import Synchronization
import Testing

/// The manual clock: jobs run in due order when time is advanced, and only then.
@Suite struct ManualClockTests {
    /// What ran, in order, with the clock's uptime when it ran.
    final class Journal: Sendable {
        let entries = Mutex<[String]>([])
        func note(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test func jobsRunInDueOrderThenSchedulingOrderAndOnlyWhenDue() {
        let clock = ManualClock()
        let journal = Journal()
        clock.schedule(after: .seconds(2)) { journal.note("b@\(clock.uptime)") }
        clock.schedule(after: .seconds(1)) { journal.note("a@\(clock.uptime)") }
        clock.schedule(after: .seconds(2)) { journal.note("c@\(clock.uptime)") }
        #expect(clock.advance(by: .milliseconds(999)) == 0)
        #expect(journal.all.isEmpty)
        #expect(clock.advance(by: .seconds(5)) == 3)
        #expect(journal.all == ["a@1.0 seconds", "b@2.0 seconds", "c@2.0 seconds"])
        #expect(clock.uptime == .milliseconds(5_999))
    }

    @Test func aJobScheduledByAJobRunsInTheSameAdvanceWhenItIsDue() {
        let clock = ManualClock()
        let journal = Journal()
        clock.schedule(after: .seconds(1)) {
            journal.note("first")
            clock.schedule(after: .seconds(1)) { journal.note("second@\(clock.uptime)") }
            clock.schedule(after: .seconds(10)) { journal.note("late") }
        }
        clock.advance(by: .seconds(3))
        #expect(journal.all == ["first", "second@2.0 seconds"])
        #expect(clock.pendingCount == 1 && clock.nextDue == .seconds(11))
    }

    @Test func aCancelledJobNeverRuns() {
        let clock = ManualClock()
        let journal = Journal()
        let job = clock.schedule(after: .seconds(1)) { journal.note("ran") }
        job.cancel()
        #expect(clock.pendingCount == 0)
        clock.advance(by: .seconds(2))
        #expect(journal.all.isEmpty)
    }

    /// A job lets go of its work (and what the work holds) at its cancel or once it has run, not
    /// when the queue next drops it or its cancellation goes: a host's timer job holds the host,
    /// which holds the clock, so a cancelled job kept until its due time kept a finished host
    /// allocated (LeakSanitizer, `make sanitize`).
    @Test(arguments: [true, false])
    func aJobLetsGoOfItsWorkOnceCancelledOrRun(cancelled: Bool) {
        final class Held: Sendable {}
        let clock = ManualClock()
        let journal = Journal()
        weak var observed: Held?
        let job: Cancellation
        do {
            let held = Held()
            observed = held
            job = clock.schedule(after: .seconds(60)) { withExtendedLifetime(held) { journal.note("ran") } }
        }
        #expect(observed != nil)
        if cancelled { job.cancel() } else { clock.advance(by: .seconds(60)) }
        #expect(observed == nil)
        #expect(journal.all == (cancelled ? [] : ["ran"]))
        withExtendedLifetime(job) {}
    }

    @Test func settleHandlersRunAfterEachJob() {
        let clock = ManualClock()
        let journal = Journal()
        clock.onSettle { journal.note("settle") }
        clock.schedule(after: .seconds(1)) { journal.note("one") }
        clock.schedule(after: .seconds(2)) { journal.note("two") }
        clock.advance(by: .seconds(2))
        #expect(journal.all == ["one", "settle", "two", "settle", "settle"])
    }

    @Test func runStopsAtItsLimitForARepeatingJob() {
        let clock = ManualClock()
        let count = Mutex(0)
        let next = Mutex<Cancellation?>(nil)
        @Sendable func tick() {
            count.withLock { $0 += 1 }
            next.withLock { $0 = clock.schedule(after: .seconds(60), tick) }
        }
        next.withLock { $0 = clock.schedule(after: .seconds(60), tick) }
        #expect(!clock.run(limit: 10))
        #expect(count.withLock { $0 } == 10 && clock.uptime == .seconds(600))
        // The waiting job holds `tick`, which holds the clock: cancelled, it lets both go.
        next.withLock { $0?.cancel() }
    }

    @Test func sleepReturnsWhenTheClockPassesItAndThrowsWhenCancelled() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(30)) }
        while clock.pendingCount == 0 { await Task.yield() }
        clock.advance(by: .seconds(29))
        clock.advance(by: .seconds(1))
        try await sleeper.value

        let cancelled = Task { try await clock.sleep(for: .seconds(30)) }
        while clock.pendingCount == 0 { await Task.yield() }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(clock.pendingCount == 0, "the sleeper's job went with it")
    }

    @Test func repeatingRunsEachStepAsAJobUntilItEnds() async {
        let clock = ManualClock()
        let journal = Journal()
        let steps = Mutex(0)
        let loop = Task {
            await clock.repeating {
                let step = steps.withLock { value -> Int in
                    value += 1
                    return value
                }
                journal.note("\(step)@\(clock.uptime)")
                return step < 3 ? .seconds(10) : nil
            }
        }
        while clock.pendingCount == 0 { await Task.yield() }
        #expect(journal.all.isEmpty, "even the first step waits for the clock to run jobs")
        clock.advance(by: .seconds(25))
        await loop.value
        #expect(journal.all == ["1@0.0 seconds", "2@10.0 seconds", "3@20.0 seconds"])
        #expect(clock.pendingCount == 0)
    }

    @Test func cancellingARepeatingLoopStopsItsNextStep() async {
        let clock = ManualClock()
        let steps = Mutex(0)
        let loop = Task {
            await clock.repeating {
                steps.withLock { $0 += 1 }
                return .seconds(1)
            }
        }
        while clock.pendingCount == 0 { await Task.yield() }
        clock.advance(by: .seconds(2))
        loop.cancel()
        await loop.value
        clock.advance(by: .seconds(10))
        #expect(steps.withLock { $0 } == 3)
        #expect(clock.pendingCount == 0)
    }

    @Test func secondsFromOutsideSaturateInsteadOfTrapping() {
        #expect(Duration.seconds(seconds: 1.5) == .milliseconds(1_500))
        #expect(Duration.seconds(seconds: -3) == .zero)
        #expect(Duration.seconds(seconds: .nan) == .zero)
        #expect(Duration.seconds(seconds: 1e16) == .century)
        #expect(Duration.seconds(seconds: .infinity) == .century)
        #expect(Duration.century.inNanoseconds == 3_155_760_000 * 1_000_000_000)
        #expect(Duration.seconds(Int64.max).inNanoseconds == .max)
    }
}
