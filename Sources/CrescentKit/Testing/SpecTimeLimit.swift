import Dispatch
import LuaBridge
import Synchronization

/// The real-time limit of each test (`crescent test --timeout`, DESIGN.md "Testing scripts").
///
/// ``start(_:)`` begins a test's period with the interrupter of the VM that runs it; once the
/// limit has passed, a timer thread interrupts that VM (its interrupt hook raises in whatever Lua
/// code runs, as `--timeout` does for a script) and wakes the runner's loop, so a wait for a
/// service ends too. ``stop()`` ends the period and says whether it expired; a firing meant for an
/// earlier period finds it over and does nothing.
///
/// ```swift
/// let limit = SpecTimeLimit(seconds: 10, loop: loop)
/// limit.start(host.vm.interrupter)
/// let outcome = host.run(index)
/// if limit.stop() { /* the test ran past 10 s */ }
/// ```
final class SpecTimeLimit: Sendable {
    private enum Phase {
        case idle
        case running(deadline: DispatchTime, interrupter: LuaInterrupter)
        case expired
    }

    /// The limit in seconds; 0 for none.
    let seconds: Double
    private let loop: PumpedEventLoop
    private let phase = Mutex(Phase.idle)
    // Dispatch sources are thread-safe (scheduling and cancelling from any thread is their
    // documented use); the type only lacks the Sendable annotation.
    nonisolated(unsafe) private let timer: any DispatchSourceTimer

    init(seconds: Double, loop: PumpedEventLoop) {
        self.seconds = seconds
        self.loop = loop
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.activate()
    }

    deinit { timer.cancel() }

    /// Starts a test's period: the VM behind `interrupter` is stopped when it has lasted the limit.
    func start(_ interrupter: LuaInterrupter) {
        guard seconds > 0 && seconds.isFinite else { return }
        let deadline = DispatchTime.now() + .nanoseconds(Int(min(seconds * 1e9, 9e18)))
        phase.withLock { $0 = .running(deadline: deadline, interrupter: interrupter) }
        timer.schedule(deadline: deadline, leeway: .milliseconds(10))
    }

    /// True once the running period has passed its limit.
    var hasExpired: Bool {
        phase.withLock { if case .expired = $0 { true } else { false } }
    }

    /// Ends the period; true when it had expired.
    @discardableResult
    func stop() -> Bool {
        phase.withLock { phase in
            defer { phase = .idle }
            if case .expired = phase { return true }
            return false
        }
    }

    private func fire() {
        // The timer is rescheduled for each test: a firing for an earlier deadline is stale.
        let target: LuaInterrupter? = phase.withLock { phase in
            guard case .running(let deadline, let interrupter) = phase, DispatchTime.now() >= deadline else { return nil }
            phase = .expired
            return interrupter
        }
        guard let target else { return }
        target.interruptForTimeout()
        loop.execute {}
    }
}
