import Model
import Services
import Synchronization

/// One faked program that takes time (`fake.process`'s `duration`): its answer comes when the
/// spec's clock has moved that far, or at its `timeout` as a real program's would (SIGTERM,
/// `timedOut`), or at once when its caller kills it (a cancelled `run`). The completion is
/// called exactly once, whichever comes first, from any thread. While it waits, it counts as a
/// wait on the clock (``ServiceClock/countClockWait(_:)``), so the spec's clock moves on at once.
final class FakedProgramRun: Sendable {
    private enum Phase {
        case answering
        case waiting(Cancellation, any ServiceClock)
        case ended
    }

    private let completion: @Sendable (Result<ProcessOutcome, ServiceError>) -> Void
    private let phase = Mutex<Phase>(.answering)

    init(completion: @escaping @Sendable (Result<ProcessOutcome, ServiceError>) -> Void) {
        self.completion = completion
    }

    /// The spec's answer, which takes `duration` seconds of the clock (0: the next turn).
    func answer(_ result: Result<ProcessOutcome, ServiceError>, after duration: Double, timeout: Double?, clock: any ServiceClock) {
        var ending = result
        var delay = duration
        if let timeout, timeout < duration {
            var outcome = ProcessOutcome(status: nil, signal: "SIGTERM")
            outcome.timedOut = true
            ending = .success(outcome)
            delay = timeout
        }
        guard delay > 0 else { return end(ending) }
        let final = ending
        let waiting = clock.schedule(after: .seconds(delay)) { [self] in end(final) }
        let ended: Bool = phase.withLock { phase in
            guard case .answering = phase else { return true }
            phase = .waiting(waiting, clock)
            clock.countClockWait(1)
            return false
        }
        if ended { waiting.cancel() }
    }

    /// Ends it now, killed by SIGKILL (nothing when it has ended).
    func kill() {
        guard finish() else { return }
        completion(.success(ProcessOutcome(status: nil, signal: "SIGKILL")))
    }

    private func end(_ result: Result<ProcessOutcome, ServiceError>) {
        guard finish() else { return }
        completion(result)
    }

    /// Ends the phase, its wait on the clock cancelled and uncounted; false when it had ended.
    private func finish() -> Bool {
        let (first, waiting): (Bool, Cancellation?) = phase.withLock { phase in
            switch phase {
            case .answering:
                phase = .ended
                return (true, nil)
            case .waiting(let waiting, let clock):
                phase = .ended
                clock.countClockWait(-1)
                return (true, waiting)
            case .ended:
                return (false, nil)
            }
        }
        waiting?.cancel()
        return first
    }
}
