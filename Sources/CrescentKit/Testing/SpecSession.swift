import Dispatch
import Foundation
import Synchronization

/// The results of a `crescent test` run as its runner thread makes them, and the watch on each
/// test host's teardown.
///
/// The tests run on a runner thread of their own (``SpecRunner``'s worker), one host at a time; the
/// thread that called ``run(write:start:)`` writes the report as results come and watches the
/// teardowns. Closing a host runs the `__gc` finalizers left in its VM, where Lua runs no hook, so
/// neither `--timeout` nor an interrupt can stop one that loops (`__gc = function() while true
/// do end end`). A teardown still running its limit plus ``abandonAfter`` seconds after it began
/// is abandoned: the test fails saying why, and a new runner thread goes on with the next test.
/// The abandoned thread never reports again (each runner has a generation, and only the current
/// one's results count); it runs on until the run ends.
///
/// ```swift
/// let session = SpecSession(limit: 10)
/// let report = try session.run(write: { print($0, terminator: "") }) { session, generation, position in
///     // runs the tests from `position`, reporting through session.add(_:generation:)
/// }
/// ```
final class SpecSession: Sendable {
    /// Where a runner thread starts: a spec file's index, and the index of its first test to run.
    struct Position: Sendable {
        var file: Int
        var test: Int
    }

    /// A host closing: when it began, what to report for it, where the next runner starts if it
    /// never ends.
    struct Teardown: Sendable {
        let started: ContinuousClock.Instant
        /// The spec file whose host it is.
        let file: String
        /// The result of the test the host ran; nil for a host that ran none (the file's first host).
        let result: SpecResult?
        let resume: Position
        /// The runner's time limit, whose period is ended when the teardown is abandoned: it would
        /// go on killing the programs of the tests after it.
        let limit: SpecTimeLimit
    }

    /// How the run stands.
    private enum Phase {
        case running
        /// Interrupted (Ctrl-C): the runner is stopping; past ``stopWait`` the report is made without it.
        case interrupting(since: ContinuousClock.Instant)
        /// Interrupted, and the runner has stopped.
        case interrupted
        case finished
        case failed(SpecRunner.UsageError)
    }

    /// What an interrupt did: the first stops the run, a second one means to quit at once; one
    /// that comes once the tests have ended is passed over (the report is being written).
    enum InterruptOutcome {
        case stopping
        case again
        case late
    }

    private struct State {
        var report = SpecReport()
        /// Report text made and not yet written.
        var text = ""
        /// The runner thread whose results count; an abandoned one's are dropped.
        var generation = 0
        var teardown: Teardown?
        var phase = Phase.running
        /// Runner threads abandoned so far, each still running a finalizer on a core of its own.
        var abandoned = 0
        /// The current runner's time limit, through which an interrupt stops its test.
        var limit: SpecTimeLimit?
        /// The test under way when the run was interrupted: the first result that came after.
        var stoppedAt: String?
    }

    /// The tests' limit in seconds (`--timeout`); 0 for none, and then no teardown is abandoned.
    let limit: Double
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    /// How long past its limit a teardown may run before it is abandoned: the time limit's own
    /// steps come first (the interrupt at the limit, then the programs killed and a blocked call
    /// broken a grace period later), which end a teardown waiting on a program.
    static let abandonAfter = SpecTimeLimit.grace * 3
    /// The most runner threads abandoned before the run stops: a finalizer that loops in every
    /// host (an object made at a spec file's top) would otherwise leave a spinning thread per test.
    static let mostAbandoned = 3
    /// The stack of a runner thread: as large as a main thread's, for the recursion specs do.
    static let stackSize = 16 << 20
    /// How long an interrupted run waits for its runner to stop before it reports without it: the
    /// interrupt stops Lua at once and kills the programs the tests started.
    static let stopWait = SpecTimeLimit.grace * 2

    init(limit: Double) {
        self.limit = limit
    }

    // MARK: The runner thread's side

    /// The runner of `generation` runs its tests under `limit`: an interrupt stops them through it.
    func attach(_ limit: SpecTimeLimit, generation: Int) {
        let interrupted = state.withLock { state in
            guard state.generation == generation else { return false }
            state.limit = limit
            if case .running = state.phase { return false }
            return true
        }
        if interrupted { limit.interruptRun() }
    }

    /// Records `result` and its report lines; false when `generation` was abandoned or the run
    /// was interrupted (the runner stops at once).
    func add(_ result: SpecResult, generation: Int) -> Bool {
        let current = state.withLock { state in
            guard state.generation == generation else { return false }
            switch state.phase {
            case .interrupting, .interrupted:
                // The test under way when Ctrl-C came: stopped, not counted.
                if state.stoppedAt == nil { state.stoppedAt = result.name }
                return false
            case .running, .finished, .failed: break
            }
            var text = ""
            state.report.add(result) { text += $0 }
            state.text += text
            return true
        }
        wake.signal()
        return current
    }

    /// Records golden files `--update` rewrote.
    func addUpdated(_ files: [String], generation: Int) {
        guard !files.isEmpty else { return }
        state.withLock { state in
            if state.generation == generation { state.report.updated += files }
        }
    }

    /// Records the run's tags a spec file's names have.
    func addTagged(_ tags: [[UInt8]], generation: Int) {
        guard !tags.isEmpty else { return }
        state.withLock { state in
            if state.generation == generation { state.report.tagged.formUnion(tags) }
        }
    }

    /// A host of `generation` begins closing; false when that generation was abandoned.
    func beginTeardown(_ teardown: Teardown, generation: Int) -> Bool {
        state.withLock { state in
            guard state.generation == generation else { return false }
            state.teardown = teardown
            return true
        }
    }

    /// The host closed: reports `result` (if any); false when the teardown was abandoned meanwhile.
    func endTeardown(reporting result: SpecResult?, generation: Int) -> Bool {
        let current = state.withLock { state in
            guard state.generation == generation else { return false }
            state.teardown = nil
            return true
        }
        guard current else { return false }
        guard let result else { return true }
        return add(result, generation: generation)
    }

    /// The runner of `generation` ran its last test, or (`failure`) could not go on.
    func finish(generation: Int, failure: SpecRunner.UsageError? = nil) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if case .interrupting = state.phase {
                state.phase = .interrupted
            } else {
                state.phase = failure.map(Phase.failed) ?? .finished
            }
        }
        wake.signal()
    }

    /// The runner thread of `generation` has returned, however it ended.
    private func runnerEnded(generation: Int) {
        state.withLock { state in
            guard state.generation == generation, case .interrupting = state.phase else { return }
            state.phase = .interrupted
        }
        wake.signal()
    }

    // MARK: Interrupts

    /// Stops the run (SIGINT, or a test's program that SIGINT ended): the test under way is
    /// interrupted and the run reports what ended before it. Any thread may call it.
    /// - Parameter announce: runs for the first interrupt before the test is stopped, so what it
    ///   writes comes before the report (which may be written and the process ended at once).
    @discardableResult
    func interrupt(announce: () -> Void = {}) -> InterruptOutcome {
        let (outcome, limit) = state.withLock { state -> (InterruptOutcome, SpecTimeLimit?) in
            switch state.phase {
            case .running:
                state.phase = .interrupting(since: .now)
                return (.stopping, state.limit)
            case .interrupting, .interrupted: return (.again, nil)
            // The tests have ended: the report is being written.
            case .finished, .failed: return (.late, nil)
            }
        }
        if outcome == .stopping { announce() }
        limit?.interruptRun()
        wake.signal()
        return outcome
    }

    // MARK: The calling thread's side

    /// Starts the first runner thread at the first test, writes the report as it comes, abandons
    /// a teardown that never ends (starting a new runner after it), and returns the results once
    /// the current runner has finished.
    ///
    /// - Parameter start: the work of a runner thread: the session, its generation, where it starts.
    func run(write: (String) -> Void,
             start: @escaping @Sendable (SpecSession, Int, Position) -> Void) throws(SpecRunner.UsageError) -> SpecReport {
        spawn(generation: 0, at: Position(file: 0, test: 0), start)
        // Bounded by the runner: each pass waits for a result, or a tenth of a second to look at the teardown.
        while true {
            _ = wake.wait(timeout: .now() + .milliseconds(100))
            // The report is taken only once the run is ending: a copy held here while the runner
            // adds its next result made that add copy every result so far, once per test.
            let (text, next, phase, report) = state.withLock { state -> (String, (Int, Position)?, Phase, SpecReport?) in
                let next = abandonIfStuck(&state)
                defer { state.text = "" }
                let ending = if case .running = state.phase { false } else { true }
                return (state.text, next, state.phase, ending ? state.report : nil)
            }
            if !text.isEmpty { write(text) }
            if let (generation, position) = next { spawn(generation: generation, at: position, start) }
            guard let report else { continue }
            switch phase {
            case .running: continue
            case .interrupting(let since):
                guard ContinuousClock.now - since > .seconds(Self.stopWait) else { continue }
                return interrupted(report, runnerStopped: false)
            case .interrupted: return interrupted(report, runnerStopped: true)
            case .finished: return report
            case .failed(let error): throw error
            }
        }
    }

    /// The report of an interrupted run: what ended before the interrupt.
    private func interrupted(_ report: SpecReport, runnerStopped: Bool) -> SpecReport {
        var report = report
        report.interruption = SpecInterruption(stoppedAt: state.withLock { $0.stoppedAt }, runnerStopped: runnerStopped)
        return report
    }

    /// Abandons the teardown under way when it has run past its limit and ``abandonAfter``: its
    /// test fails, saying why, and the next runner's generation and start are returned.
    private func abandonIfStuck(_ state: inout State) -> (Int, Position)? {
        guard case .running = state.phase, limit > 0, let teardown = state.teardown,
              ContinuousClock.now - teardown.started > .seconds(limit + Self.abandonAfter) else { return nil }
        state.generation += 1
        state.teardown = nil
        teardown.limit.stop()
        let reason = "the spec file's host did not close within \(formatSeconds(limit)) s (--timeout) after its last test: a finalizer "
            + "(a __gc metamethod) still ran when its VM closed, where nothing can stop Lua code, so the host was abandoned and the "
            + "run went on with a fresh one (a __gc must end quickly: no loops, no waits)"
        let ran = teardown.result
        let message = [ran?.status == .failed || ran?.status == .error ? ran?.message : nil, reason]
            .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "\n")
        let result = SpecResult(file: teardown.file, name: ran?.name ?? "(closing a host of the file)",
                                location: ran?.location ?? teardown.file, status: .error, message: message,
                                output: ran?.output ?? "", seconds: ran?.seconds ?? 0)
        var text = ""
        state.report.add(result) { text += $0 }
        state.abandoned += 1
        guard state.abandoned < Self.mostAbandoned else {
            let stop = SpecResult(file: teardown.file, name: "(the run stopped)", location: teardown.file, status: .error,
                                  message: "\(state.abandoned) test hosts did not close, each still running a finalizer on a core of "
                                    + "its own: the tests after \(result.name) were not run (fix the __gc that loops, then run again)",
                                  output: "", seconds: 0)
            state.report.add(stop) { text += $0 }
            state.text += text
            state.phase = .finished
            return nil
        }
        state.text += text
        return (state.generation, teardown.resume)
    }

    private func spawn(generation: Int, at position: Position,
                       _ start: @escaping @Sendable (SpecSession, Int, Position) -> Void) {
        let thread = Thread { [self] in
            start(self, generation, position)
            runnerEnded(generation: generation)
        }
        thread.stackSize = Self.stackSize
        thread.start()
    }
}
