import Dispatch
import LuaBridge
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Interrupts a Lua plugin's method that runs past its time limit without yielding: such code
/// holds the loop, so no clock job can end it. One timer per plugin VM checks, a few times per
/// time limit, the deadline of the code running now (set around each resume of a method's task).
///
/// It works in real time (`CLOCK_MONOTONIC`, the reading a real clock's deadlines use): a
/// virtual clock cannot advance while the loop is held.
final class RunawayWatchdog {
    /// The deadline of the method code running now, in monotonic nanoseconds; 0 when none runs.
    private final class Deadline: Sendable {
        let value = Atomic<UInt64>(0)
    }

    private let runningUntil = Deadline()
    private let timer: any DispatchSourceTimer
    private let limitNanoseconds: UInt64

    init(interrupter: LuaInterrupter, limit: Double) {
        limitNanoseconds = UInt64(max(0, min(limit, 1e9)) * 1e9)
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        let period = DispatchTimeInterval.milliseconds(max(10, Int(limit * 250)))
        timer.schedule(deadline: .now() + period, repeating: period)
        let runningUntil = self.runningUntil
        timer.setEventHandler {
            let deadline = runningUntil.value.load(ordering: .relaxed)
            if deadline != 0 && RunawayWatchdog.now() >= deadline { interrupter.interruptForTimeout() }
        }
        timer.resume()
    }

    deinit { timer.cancel() }

    /// Method code with `deadline` (monotonic nanoseconds) starts running, or (nil) stops.
    func running(until deadline: UInt64?) {
        runningUntil.value.store(deadline ?? 0, ordering: .relaxed)
    }

    /// The deadline of a method call starting now: the time limit from now, on the clock the
    /// timer checks against.
    func deadline() -> UInt64 { Self.now() + limitNanoseconds }

    func stop() { timer.cancel() }

    static func now() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
