import Synchronization

/// How ``ServiceClock/task(after:_:)`` starts its work: a job of the clock that starts a task,
/// both stopped by one ``Cancellation``.
enum ClockTask {
    /// Schedules `work` on `clock`; `started` runs in the job just before the task starts (not at
    /// all when cancelled first) and `finished` when the task has ended.
    static func start(on clock: any ServiceClock, after delay: Duration,
                      started: @escaping @Sendable () -> Void = {}, finished: @escaping @Sendable () -> Void = {},
                      _ work: @escaping @Sendable () async -> Void) -> Cancellation {
        let cancellation = Cancellation()
        let running = Running()
        let job = clock.schedule(after: delay) {
            running.task.withLock { task in
                // Under the lock: a cancel either comes first (nothing starts) or finds the task.
                guard !cancellation.isCancelled else { return }
                started()
                task = Task {
                    await work()
                    finished()
                }
            }
        }
        cancellation.onCancel {
            job.cancel()
            running.task.withLock { $0 }?.cancel()
        }
        return cancellation
    }

    /// The task once its job has started it.
    private final class Running: Sendable {
        let task = Mutex<Task<Void, Never>?>(nil)
    }
}
