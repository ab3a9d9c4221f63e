import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Tells when the run becomes its terminal's foreground job: a script started in the background
/// (`crescent app.lua &`) and brought back with `fg`, or stopped with Ctrl-Z, sent on with `bg`
/// and brought back later. The shell gives the terminal to the job's process group and sends
/// nothing when the job was running (bash sends SIGCONT only to a stopped job), so the
/// terminal's foreground group is read four times a second, and at once on SIGCONT.
final class ForegroundWatch: Sendable {
    /// How often the terminal's foreground group is read.
    static let interval = DispatchTimeInterval.milliseconds(250)

    private let wasForeground: Atomic<Bool>
    // Dispatch sources are thread-safe (resuming and cancelling from any thread is their
    // documented use); the type only lacks the Sendable annotation.
    nonisolated(unsafe) private let timer: any DispatchSourceTimer
    nonisolated(unsafe) private let continued: any DispatchSourceSignal

    /// Starts watching stdout's terminal; `onForeground` runs on `queue` each time the run
    /// becomes the foreground job.
    init(queue: DispatchQueue, onForeground: @escaping @Sendable () -> Void) {
        wasForeground = Atomic(Self.isForeground)
        timer = DispatchSource.makeTimerSource(queue: queue)
        continued = DispatchSource.makeSignalSource(signal: SIGCONT, queue: queue)
        let check: @Sendable () -> Void = { [weak self] in
            guard let self else { return }
            let now = Self.isForeground
            if now && !wasForeground.exchange(now, ordering: .relaxed) { onForeground() }
            if !now { wasForeground.store(false, ordering: .relaxed) }
        }
        timer.setEventHandler(handler: check)
        continued.setEventHandler(handler: check)
        timer.schedule(deadline: .now() + Self.interval, repeating: Self.interval, leeway: .milliseconds(50))
        timer.resume()
        continued.resume()
    }

    /// Stops watching.
    func cancel() {
        timer.cancel()
        continued.cancel()
    }

    /// Whether this process is in the foreground group of stdout's terminal (true when stdout is
    /// no terminal).
    static var isForeground: Bool {
        let group = tcgetpgrp(1)
        return group == -1 || group == getpgrp()
    }
}
