import Synchronization

extension ServiceClock {
    /// Runs `step` as soon as the clock runs jobs, then again after each delay it returns, until
    /// it returns nil or the calling task is cancelled; returns then.
    ///
    /// Every step, the first included, runs as a job of the clock: on a ``ManualClock`` advancing
    /// time runs the steps in order with everything else that falls due (a replay, a poll loop, a
    /// ticker) and none waits in real time; on a host's clock every step runs on the same thread
    /// kind, so what a step reports reaches the host in the order it was reported. Steps never
    /// overlap: the next is scheduled after one has returned.
    ///
    /// ```swift
    /// await clock.repeating {
    ///     report(position)
    ///     return .seconds(1)       // nil ends the loop
    /// }
    /// ```
    public func repeating(_ step: @escaping @Sendable () -> Duration?) async {
        let run = RepeatingRun(clock: self, step: step)
        await withTaskCancellationHandler {
            await withCheckedContinuation { run.start($0) }
        } onCancel: {
            run.stop()
        }
    }
}

/// The state of one ``ServiceClock/repeating(_:)`` loop: the job waiting on the clock and the
/// caller waiting for the end.
private final class RepeatingRun: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var job: Cancellation?
        var stopped = false
    }

    private let clock: any ServiceClock
    private let step: @Sendable () -> Duration?
    private let state = Mutex(State())

    init(clock: any ServiceClock, step: @escaping @Sendable () -> Duration?) {
        self.clock = clock
        self.step = step
    }

    func start(_ continuation: CheckedContinuation<Void, Never>) {
        let stoppedFirst = state.withLock { state in
            state.continuation = continuation
            return state.stopped
        }
        if stoppedFirst { finish() } else { scheduleTick(after: .zero) }
    }

    func stop() {
        let job = state.withLock { state in
            state.stopped = true
            return state.job
        }
        job?.cancel()
        finish()
    }

    private func tick() {
        guard !state.withLock({ $0.stopped }) else { return }
        guard let delay = step() else {
            finish()
            return
        }
        scheduleTick(after: delay)
    }

    private func scheduleTick(after delay: Duration) {
        let job = clock.schedule(after: delay) { [self] in tick() }
        let stopped = state.withLock { state in
            state.job = job
            return state.stopped
        }
        if stopped { job.cancel() }
    }

    /// Ends the loop: the caller returns, once.
    private func finish() {
        let continuation = state.withLock { state in
            state.stopped = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume()
    }
}
