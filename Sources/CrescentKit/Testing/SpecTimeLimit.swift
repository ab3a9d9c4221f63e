import Dispatch
import LuaBridge
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The real-time limit of each test (`crescent test --timeout`, DESIGN.md "Testing scripts").
///
/// ``start(_:plugins:)`` begins a test's period with the interrupter of the VM that runs it (and
/// the test host's plugin VMs); once the limit has passed, a timer thread interrupts those VMs
/// (the interrupt hook raises in whatever Lua code runs, as `--timeout` does for a script: a
/// project plugin's method that never answers is stopped too) and wakes the runner's loop, so a
/// wait for a service ends too. A test still running ``grace`` seconds after that is waiting
/// inside a C call, where no hook runs: on a program it started (`os.execute("sleep 100")`,
/// `io.popen(...):read("a")`), or reading a pipe (`io.read()` on a stdin that stays open). The
/// programs the runner has started are then killed, and the runner's thread gets a signal whose
/// handler does not restart the call (``breakSignal``), so the read returns `EINTR`; the hook
/// then stops the test. ``stop()`` ends the period and says whether it expired; a firing meant
/// for an earlier period finds it over and does nothing.
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
        case running(deadline: DispatchTime, interrupter: LuaInterrupter, plugins: PluginInterrupters?, period: Int)
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
    /// Set once by ``interruptRun()``: the run stops.
    private let runInterrupted = Atomic(false)
    // Dispatch sources are thread-safe (scheduling and cancelling from any thread is their
    // documented use); the type only lacks the Sendable annotation.
    nonisolated(unsafe) private let timer: any DispatchSourceTimer

    /// The thread that runs the tests (the one that made the limit), which ``breakSignal`` wakes.
    private let runner: pthread_t

    /// Stops the whole run (``SpecSession/interrupt()``): what a test's program that SIGINT ended asks for.
    let stopsRun: @Sendable () -> Void

    init(seconds: Double, loop: PumpedEventLoop, stopsRun: @escaping @Sendable () -> Void = {}) {
        self.seconds = seconds
        self.loop = loop
        self.stopsRun = stopsRun
        runner = pthread_self()
        _ = Self.installBreakHandler
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.activate()
    }

    deinit { timer.cancel() }

    /// Starts a test's period: the VM behind `interrupter` is stopped when it has lasted the limit.
    /// `plugins`: the test host's plugin VMs, stopped with it (their code runs on the same thread).
    /// With no limit (`--timeout 0`) the period still holds the VM, for ``interruptRun()``.
    func start(_ interrupter: LuaInterrupter, plugins: PluginInterrupters? = nil) {
        let limited = seconds > 0 && seconds.isFinite
        let deadline = limited ? DispatchTime.now() + .nanoseconds(Int(min(seconds * 1e9, 9e18))) : .distantFuture
        let period = periods.add(1, ordering: .relaxed).newValue
        phase.withLock { $0 = .running(deadline: deadline, interrupter: interrupter, plugins: plugins, period: period) }
        // A run already interrupted stops each VM it starts at once (a test begun as Ctrl-C came).
        if runInterrupted.load(ordering: .sequentiallyConsistent) {
            interrupter.interrupt(status: 130)
            plugins?.interrupt(status: 130, timeout: false)
        }
        if limited { timer.schedule(deadline: deadline, leeway: .milliseconds(10)) }
    }

    /// Stops the run (Ctrl-C): the running VM is interrupted now and every one started after it,
    /// the programs the runner started are killed, and a blocked call of the runner's thread is
    /// broken, so the test under way ends at once and no other starts.
    func interruptRun() {
        guard !runInterrupted.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let target: (interrupter: LuaInterrupter, plugins: PluginInterrupters?)? = phase.withLock { phase in
            if case .running(_, let interrupter, let plugins, _) = phase { (interrupter, plugins) } else { nil }
        }
        target?.interrupter.interrupt(status: 130)
        target?.plugins?.interrupt(status: 130, timeout: false)
        ProcessTree.killDescendants()
        pthread_kill(runner, Self.breakSignal)
        loop.execute {}
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
        let target: (interrupter: LuaInterrupter, plugins: PluginInterrupters?, period: Int)? = phase.withLock { phase in
            guard case .running(let deadline, let interrupter, let plugins, let period) = phase, DispatchTime.now() >= deadline
            else { return nil }
            phase = .expired(period: period)
            return (interrupter, plugins, period)
        }
        guard let target else { return }
        target.interrupter.interruptForTimeout()
        target.plugins?.interrupt(status: 0, timeout: true)
        loop.execute {}
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(Self.grace * 1000))) { [weak self] in
            self?.killProgramsIfStuck(period: target.period, attempt: 1)
        }
    }

    /// Kills every program the runner started, when the period that expired is still not over.
    private func killProgramsIfStuck(period: Int, attempt: Int) {
        // Killed under the lock: once ``stop()`` has returned, no kill meant for this test can
        // reach the programs (or break the blocked call) of the next one, which a spec file's
        // tests now start at once, in the same host.
        let stuck = phase.withLock { phase in
            guard case .expired(let expired) = phase, expired == period else { return false }
            ProcessTree.killDescendants()
            pthread_kill(runner, Self.breakSignal)
            return true
        }
        guard stuck else { return }
        loop.execute {}
        // A call the signal did not end (a C loop retrying its read) gets it again, every grace
        // period, a bounded number of times.
        guard attempt < Self.attempts else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(Self.grace * 1000))) { [weak self] in
            self?.killProgramsIfStuck(period: period, attempt: attempt + 1)
        }
    }

    /// The signal that ends a blocking call of the runner's thread (`read` on a pipe) with `EINTR`:
    /// its handler does nothing and is installed without `SA_RESTART` (the VMs' interrupt signal
    /// restarts calls, so it cannot be that one).
    static let breakSignal = __libc_current_sigrtmin() + 3

    /// How many times a stuck test's programs are killed and its thread signalled.
    static let attempts = 60

    /// Installs the handler of ``breakSignal`` once per process.
    private static let installBreakHandler: Void = {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = 0
        sigemptyset(&action.sa_mask)
        sigaction(breakSignal, &action, nil)
    }()
}
