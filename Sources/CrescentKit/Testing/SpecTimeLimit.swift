import Dispatch
import LuaBridge
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The real-time limit of each test (`crescent test --timeout`, DESIGN.md "Testing scripts").
///
/// ``start(_:)`` begins a test's period with the interrupter of the VM that runs it; once the
/// limit has passed, a timer thread interrupts that VM (its interrupt hook raises in whatever Lua
/// code runs, as `--timeout` does for a script) and wakes the runner's loop, so a wait for a
/// service ends too. A test still running ``grace`` seconds after that is waiting inside a C call
/// on a program it started (`os.execute("sleep 100")`, `io.popen(...):read("a")`), where no hook
/// runs: the programs the runner has started then are killed, so the call returns and the hook
/// stops the test. ``stop()`` ends the period and says whether it expired; a firing meant for an
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
        case running(deadline: DispatchTime, interrupter: LuaInterrupter, period: Int)
        case expired(period: Int)
    }

    /// How long an interrupted test has to stop before the programs it waits on are killed.
    static let grace = 1.0

    /// The limit in seconds; 0 for none.
    let seconds: Double
    private let loop: PumpedEventLoop
    private let phase = Mutex(Phase.idle)
    /// Counts the periods, so a late firing can tell its own from a later test's.
    private let periods = Atomic(0)
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
        let period = periods.add(1, ordering: .relaxed).newValue
        phase.withLock { $0 = .running(deadline: deadline, interrupter: interrupter, period: period) }
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
        let target: (interrupter: LuaInterrupter, period: Int)? = phase.withLock { phase in
            guard case .running(let deadline, let interrupter, let period) = phase, DispatchTime.now() >= deadline else { return nil }
            phase = .expired(period: period)
            return (interrupter, period)
        }
        guard let target else { return }
        target.interrupter.interruptForTimeout()
        loop.execute {}
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(Self.grace * 1000))) { [weak self] in
            self?.killProgramsIfStuck(period: target.period)
        }
    }

    /// Kills every program the runner started, when the period that expired is still not over.
    private func killProgramsIfStuck(period: Int) {
        let stuck = phase.withLock { phase in
            if case .expired(let expired) = phase { expired == period } else { false }
        }
        guard stuck else { return }
        for process in ProcessTree.descendants(of: getpid()) { kill(process, SIGKILL) }
        loop.execute {}
    }
}
