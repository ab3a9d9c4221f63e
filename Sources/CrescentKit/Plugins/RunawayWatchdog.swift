import Dispatch
import LuaBridge
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Interrupts a Lua plugin's code that runs past its time limit without yielding: such code
/// holds the loop, so no clock job can end it. One timer per plugin VM checks, a few times per
/// time limit, the deadline of the code running now: each turn of the plugin's host (its `main`,
/// a timer, a handler, a task) runs with a deadline of the time limit from its start, and a
/// method's task, around each of its resumes, with the one counted from the call's start.
///
/// It works in real time (`CLOCK_MONOTONIC`, the reading a real clock's deadlines use, less the
/// time spent waiting on a person's answer): a virtual clock cannot advance while the loop is held.
final class RunawayWatchdog {
    /// The deadline of the method code running now, in monotonic nanoseconds; 0 when none runs.
    private final class Deadline: Sendable {
        let value = Atomic<UInt64>(0)
    }

    private let runningUntil = Deadline()
    /// The deadline of the turn running now (0 outside turns): code inside it that has no
    /// deadline of its own runs until this one. Touched on the loop only.
    private var turnDeadline: UInt64 = 0
    private let timer: any DispatchSourceTimer
    private let limitNanoseconds: UInt64

    /// - Parameter pastDeadline: also run (on the timer's thread) when code runs past its
    ///   deadline: what else must stop for the interrupt to be seen (a plugin's programs it reads).
    init(interrupter: LuaInterrupter, limit: Double, pastDeadline: @escaping @Sendable () -> Void = {}) {
        limitNanoseconds = UInt64(max(0, min(limit, 1e9)) * 1e9)
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        let period = DispatchTimeInterval.milliseconds(max(10, Int(limit * 250)))
        timer.schedule(deadline: .now() + period, repeating: period)
        let runningUntil = self.runningUntil
        timer.setEventHandler {
            let deadline = runningUntil.value.load(ordering: .relaxed)
            if deadline != 0 && RunawayWatchdog.now() >= deadline {
                interrupter.interruptForTimeout()
                pastDeadline()
            }
        }
        timer.resume()
    }

    deinit { timer.cancel() }

    /// Method code with `deadline` (monotonic nanoseconds) starts running, or (nil) stops: the
    /// turn's deadline applies again.
    func running(until deadline: UInt64?) {
        runningUntil.value.store(deadline ?? turnDeadline, ordering: .relaxed)
    }

    /// A turn of the plugin's host starts (its code has the time limit from now) or ends.
    func turn(started: Bool) {
        turnDeadline = started ? deadline() : 0
        runningUntil.value.store(turnDeadline, ordering: .relaxed)
    }

    /// True when the code running now is past its deadline: an interrupt for the time limit
    /// came from this watchdog rather than from the run (`--timeout`).
    var isPastDeadline: Bool {
        let deadline = runningUntil.value.load(ordering: .relaxed)
        return deadline != 0 && Self.now() >= deadline
    }

    /// The time limit, in seconds.
    var limit: Double { Double(limitNanoseconds) / 1e9 }

    /// The deadline of a method call starting now: the time limit from now, on the clock the
    /// timer checks against.
    func deadline() -> UInt64 { Self.now() + limitNanoseconds }

    /// The deadline of a method call starting now in the turn running now: the turn's, which
    /// began within the same loop job (one clock reading per call, not two).
    func deadlineInTurn() -> UInt64 { turnDeadline != 0 ? turnDeadline : deadline() }

    func stop() { timer.cancel() }

    /// Question-free monotonic time: it stands still while a person is asked to grant a plugin's
    /// permissions (``QuestionTime``), so code that waited on the question is not past its
    /// deadline for that wait.
    static func now() -> UInt64 {
        let now = QuestionTime.monotonic()
        return now - min(now, QuestionTime.shared.excluded(atMonotonic: now))
    }
}
