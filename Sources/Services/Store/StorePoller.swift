import Dispatch
import Model
import Synchronization

/// Calls `poll` every interval of the host's clock until cancelled or `poll` says stop.
///
/// Each poll is a job of the clock that hands the work to a serial queue of the poller's own,
/// off Swift's shared pool: CPU-bound work there (a slow password hash, a geocoder load) must not
/// hold back the news of another process's writes, and a clock job must stay short.
final class StorePoller: Sendable {
    private let queue = DispatchQueue(label: "crescent.store.poll")
    private let clock: any ServiceClock
    private let interval: Duration
    private let poll: @Sendable () -> Bool
    private let pending = Mutex<Cancellation?>(nil)
    private let cancelled = Atomic<Bool>(false)

    /// Starts polling.
    ///
    /// - Parameters:
    ///   - interval: the time between the end of one poll and the start of the next.
    ///   - poll: one poll; it returns false to stop for good.
    init(interval: Duration, clock: any ServiceClock, _ poll: @escaping @Sendable () -> Bool) {
        self.clock = clock
        self.interval = interval
        self.poll = poll
        scheduleNext()
    }

    private func scheduleNext() {
        let job = clock.schedule(after: interval) { [weak self] in
            guard let self else { return }
            queue.async { [weak self] in
                guard let self, !cancelled.load(ordering: .acquiring), poll() else { return }
                scheduleNext()
            }
        }
        pending.withLock { $0 = job }
        if cancelled.load(ordering: .acquiring) { job.cancel() }
    }

    /// Stops polling. Idempotent.
    func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pending.withLock { $0 }?.cancel()
    }

    deinit { cancel() }
}
