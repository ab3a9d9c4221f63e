import Dispatch
import Foundation
import Synchronization

/// Calls `poll` every interval on a thread of its own until cancelled or `poll` says stop.
///
/// A thread rather than a Swift task: CPU-bound work in Swift's shared pool (a slow password
/// hash, a geocoder load) must not hold back the news of another process's writes.
final class StorePoller: Sendable {
    private let wake = DispatchSemaphore(value: 0)
    private let cancelled = Atomic<Bool>(false)

    /// Starts polling.
    ///
    /// - Parameters:
    ///   - interval: nanoseconds between two polls.
    ///   - poll: one poll; it returns false to stop for good.
    init(interval: UInt64, _ poll: @escaping @Sendable () -> Bool) {
        let wake = self.wake
        let thread = Thread {
            while wake.wait(timeout: .now() + .nanoseconds(Int(clamping: interval))) == .timedOut {
                guard poll() else { return }
            }
        }
        thread.name = "crescent.store.poll"
        thread.start()
    }

    /// Stops polling (the thread ends at once). Idempotent.
    func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
    }

    deinit { cancel() }
}
