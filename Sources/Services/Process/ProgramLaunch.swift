import Glibc
import Model
import Synchronization

/// One program's start, off the loop: the loop prepares it (``ProcessLauncher/prepare(_:keepInputOpen:)``:
/// the checks and the pipes) and hands it to ``LaunchThreads``, whose `posix_spawn` waits for the
/// child's exec (under load most of a start's time) while the loop goes on.
///
/// Until the program exists, what is asked of it waits here: a signal (a cancel, a kill, the
/// owner's end) is sent to its group as soon as it has started, so a cancel before the start
/// still kills what gets started; ``pid`` waits for the start, or makes it on the asking thread
/// when no launch thread has taken it yet, so at most one start is waited for.
final class ProgramLaunch: Sendable {
    /// Where the start is.
    private enum Phase {
        case queued
        /// A thread is in ``ProcessLauncher/start(_:)``.
        case launching
        case started(pid_t)
        case failed
    }

    private struct State {
        var phase = Phase.queued
        /// Signals asked for before the start, sent in order once it has happened.
        var pendingSignals: [Int32] = []
        /// Told how the start went, once (then dropped: it holds the program's reader).
        var finished: (@Sendable (Result<ProcessLauncher.Started, ServiceError>) -> Void)?
    }

    let prepared: ProcessLauncher.Prepared
    private let state = Mutex<State>(State())

    init(_ prepared: ProcessLauncher.Prepared) {
        self.prepared = prepared
    }

    /// Queues the start on `threads`; `finished` is called once, on the thread that started it,
    /// with the pid and exit descriptor or why it did not start.
    func enqueue(on threads: LaunchThreads,
                 finished: @escaping @Sendable (Result<ProcessLauncher.Started, ServiceError>) -> Void) {
        state.withLock { $0.finished = finished }
        threads.enqueue(self)
    }

    /// Starts the program here unless another thread has taken it; once only.
    func perform() {
        let mine = state.withLock { state in
            guard case .queued = state.phase else { return false }
            state.phase = .launching
            return true
        }
        guard mine else { return }
        let result = ProcessLauncher.start(prepared)
        let finished = state.withLock { state in
            switch result {
            case .success(let started):
                state.phase = .started(started.pid)
                // Under the lock, so a signal asked for now is not sent before these.
                for signal in state.pendingSignals { ProcessGroups.signal(started.pid, signal) }
            case .failure:
                state.phase = .failed
            }
            state.pendingSignals = []
            defer { state.finished = nil }
            return state.finished
        }
        finished?(result)
    }

    /// The program's pid once it has started, nil when its start failed: waits for a start
    /// under way on a launch thread (one `posix_spawn`), or starts it on this thread when none
    /// has taken it (so a script that reads `pid` of its 200th spawn does not wait for the 199
    /// before it).
    var pid: pid_t? {
        perform()
        // Another thread is in posix_spawn, which returns once the child has exec'd: polled
        // (the only wait a start leaves on the loop, and only when a pid is asked for early).
        var polls = 0
        while true {
            switch state.withLock({ $0.phase }) {
            case .started(let pid): return pid
            case .failed: return nil
            case .queued, .launching:
                polls += 1
                var pause = timespec(tv_sec: 0, tv_nsec: polls < 100 ? 20_000 : 1_000_000)
                nanosleep(&pause, nil)
            }
        }
    }

    /// The pid without waiting: nil until the program has started.
    var startedPid: pid_t? {
        guard case .started(let pid) = state.withLock({ $0.phase }) else { return nil }
        return pid
    }

    /// Sends `signal` to the program's group, now or as soon as it has started (nothing once it
    /// has been reaped, or when it never started). Any thread.
    func signal(_ signal: Int32) {
        state.withLock { state in
            switch state.phase {
            case .queued, .launching: state.pendingSignals.append(signal)
            case .started(let pid): ProcessGroups.signal(pid, signal)
            case .failed: break
            }
        }
    }
}
