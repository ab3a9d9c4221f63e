import Synchronization

/// A ``ServiceClock`` that moves only when told: the test double for the host and its services,
/// and the clock of `crescent test`.
///
/// Scheduled work waits in one queue ordered by due time (then by order of scheduling).
/// ``advance(by:)`` runs each job that falls due, in that order, on the calling thread, with
/// ``uptime`` set to the job's due time, so a timer, a feed poll and a replayed fix scheduled for
/// the same virtual second run in the order they were asked for. After each job the clock calls
/// the settle handlers (a host drains its loop there), so the work a job causes happens before
/// the next job's time.
///
/// ```swift
/// let clock = ManualClock()
/// clock.schedule(after: .seconds(60)) { polled += 1 }
/// clock.advance(by: .seconds(3600))     // runs it once, at uptime 60 s
/// ```
public final class ManualClock: ServiceClock {
    private struct Job: HeapOrdered {
        let due: Duration
        let order: UInt64
        let cancellation: Cancellation
        let work: JobWork

        func runsBefore(_ other: Job) -> Bool {
            due != other.due ? due < other.due : order < other.order
        }
    }

    /// A job's work, let go of when the job runs or is cancelled rather than when the queue next
    /// drops the job: what the work holds (a host's timer holds the host, which holds this
    /// clock) is freed then, as a real loop frees a cancelled scheduled task.
    private final class JobWork: Sendable {
        private let body: Mutex<(@Sendable () -> Void)?>

        init(_ body: @escaping @Sendable () -> Void) { self.body = Mutex(body) }

        /// The work, once: nil after a cancel or an earlier take.
        func take() -> (@Sendable () -> Void)? {
            body.withLock { body in
                defer { body = nil }
                return body
            }
        }
    }

    private struct State {
        var now: Duration = .zero
        var nextOrder: UInt64 = 0
        /// Every job scheduled and not yet taken, cancelled ones among them until they reach the
        /// head or are swept.
        var jobs = JobHeap<Job>()
        /// The jobs in the heap whose work was neither run nor cancelled.
        var live = 0
        var settleHandlers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    private let wallOrigin: Double
    private let suspended = Atomic<Int>(0)
    private let waiting = Atomic<Int>(0)
    private let running = Atomic<Int>(0)

    /// A clock at uptime zero whose wall clock reads `wallTime` (default 2026-01-01T00:00:00Z).
    public init(wallTime: Double = 1_767_225_600) {
        wallOrigin = wallTime
    }

    public var uptime: Duration { state.withLock { $0.now } }

    public var wallTime: Double { wallOrigin + uptime.inSeconds }

    /// Below this size the queue is never swept: the head's drop is enough.
    static let sweepFloor = 64

    /// How many jobs are waiting (cancelled ones not counted).
    public var pendingCount: Int { state.withLock { $0.live } }

    /// The due time of the next job, or nil when nothing waits.
    public var nextDue: Duration? {
        state.withLock { state in
            while let head = state.jobs.first, head.cancellation.isCancelled { _ = state.jobs.pop() }
            return state.jobs.first?.due
        }
    }

    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Cancellation {
        let cancellation = Cancellation()
        let work = JobWork(work)
        state.withLock { state in
            let job = Job(due: state.now + max(delay, .zero), order: state.nextOrder,
                          cancellation: cancellation, work: work)
            state.nextOrder += 1
            state.jobs.push(job)
            state.live += 1
        }
        // The cancel drops the work at once; the job itself leaves the queue when it reaches the
        // head, or in a sweep once cancelled jobs are more than half of it. Whoever takes the
        // work (this, or the clock running the job) counts the job as gone, exactly once.
        cancellation.onCancel { [weak self] in
            guard work.take() != nil, let self else { return }
            state.withLock { state in
                state.live -= 1
                if state.jobs.count >= Self.sweepFloor, state.live * 2 < state.jobs.count {
                    state.jobs.removeAll { $0.cancellation.isCancelled }
                }
            }
        }
        return cancellation
    }

    /// How many tasks wait in ``sleep(for:)`` right now: work that only advancing can finish
    /// (a test runner tells them from work still running on other threads).
    public var sleepers: Int { suspended.load(ordering: .acquiring) }

    public func sleep(for delay: Duration) async throws {
        let wake = Cancellation()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumed = Atomic<Bool>(false)
                let resume: @Sendable (Bool) -> Void = { [self] cancelled in
                    guard !resumed.exchange(true, ordering: .acquiringAndReleasing) else { return }
                    // Counted down by the job that wakes it, so a runner sees the wake at once.
                    suspended.subtract(1, ordering: .acquiringAndReleasing)
                    if cancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
                // Scheduled before it counts as asleep: a runner that sees the sleeper must find
                // its job when it advances.
                let job = schedule(after: delay) { resume(false) }
                suspended.add(1, ordering: .acquiringAndReleasing)
                wake.onCancel {
                    job.cancel()
                    resume(true)
                }
            }
        } onCancel: {
            wake.cancel()
        }
    }

    /// How many waits counted by ``countClockWait(_:)`` are under way: like ``sleepers``, work
    /// only advancing can finish, but no task the clock wakes goes on running after it.
    public var clockWaits: Int { waiting.load(ordering: .acquiring) }

    public func countClockWait(_ change: Int) {
        waiting.add(change, ordering: .acquiringAndReleasing)
    }

    /// How many tasks started by ``task(after:_:)`` have not ended yet: work a runner waits for
    /// before it moves time on (unless the task sleeps on the clock, see ``sleepers``).
    public var runningTasks: Int { running.load(ordering: .acquiring) }

    @discardableResult
    public func task(after delay: Duration, _ work: @escaping @Sendable () async -> Void) -> Cancellation {
        // Counted from the job that starts it, on the thread that advances, so a runner that
        // settles after the job already sees it.
        ClockTask.start(on: self, after: delay, started: { [self] in running.add(1, ordering: .acquiringAndReleasing) },
                        finished: { [self] in running.subtract(1, ordering: .acquiringAndReleasing) }, work)
    }

    /// Calls `handler` after each job the clock runs (a host drains its loop there).
    public func onSettle(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.settleHandlers.append(handler) }
    }

    /// Moves time forward by `delay`, running every job due by then in order; returns how many ran.
    /// `stop` is asked before each job: when it says true (a test past its time limit, millions
    /// of firings of a short timer), time stays at the last job run.
    @discardableResult
    public func advance(by delay: Duration, stop: () -> Bool = { false }) -> Int {
        let target = state.withLock { $0.now } + max(delay, .zero)
        var ran = 0
        while !stop(), let work = takeJob(dueBy: target) {
            work()
            ran += 1
            settle()
        }
        if !stop() { state.withLock { $0.now = max($0.now, target) } }
        settle()
        return ran
    }

    /// Runs jobs until none is left or `limit` have run (a repeating timer never runs out);
    /// returns true when the queue is empty.
    @discardableResult
    public func run(limit: Int = 100_000) -> Bool {
        for _ in 0..<limit {
            guard let work = takeJob(dueBy: nil) else { return true }
            work()
            settle()
        }
        return pendingCount == 0
    }

    /// Removes the first job due by `target` (any job when nil), moves time to it and returns
    /// its work; cancelled jobs on the way are dropped.
    private func takeJob(dueBy target: Duration?) -> (@Sendable () -> Void)? {
        state.withLock { state in
            while let first = state.jobs.first, target.map({ first.due <= $0 }) ?? true {
                _ = state.jobs.pop()
                guard let work = first.work.take() else { continue }
                state.live -= 1
                state.now = max(state.now, first.due)
                return work
            }
            return nil
        }
    }

    private func settle() {
        for handler in state.withLock({ $0.settleHandlers }) { handler() }
    }
}
