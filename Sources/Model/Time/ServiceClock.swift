/// The one source of time for the host and every service: monotonic and wall-clock readings,
/// scheduling, and sleeping.
///
/// The host makes one clock and hands it to every plugin (``PluginContext/clock``), so replays,
/// polling, backoff, throttles and timeouts all follow it. In production it is ``SystemClock``;
/// tests and `crescent test` use ``ManualClock``, where nothing waits in real time and advancing
/// the clock runs everything due, in order.
///
/// ```swift
/// let poll = clock.schedule(after: .seconds(60)) { feeds.pollDue() }
/// poll.cancel()                                       // before it runs: it never runs
/// try await clock.sleep(for: .milliseconds(250))      // in async code
/// let age = clock.uptime - fix.receivedAt             // monotonic, for freshness
/// ```
public protocol ServiceClock: Sendable {
    /// Monotonic time since the clock started; never goes back.
    var uptime: Duration { get }
    /// Wall-clock time in seconds since 1970 (UTC), for timestamps that people read or store.
    var wallTime: Double { get }
    /// Runs `work` once, `delay` from now, on a thread of the clock's choosing; cancelling the
    /// returned value first means it never runs. A zero or negative delay runs it on a later turn.
    @discardableResult
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Cancellation
    /// Waits `delay` without blocking a thread; throws `CancellationError` when the task is
    /// cancelled first.
    func sleep(for delay: Duration) async throws
    /// For a clock that follows real time: the `CLOCK_MONOTONIC` reading, in nanoseconds, `delay`
    /// from now, so a library that keeps its own timers (a client's request deadline) can be
    /// given the same deadline at no extra cost; nil for a virtual clock, where the service
    /// schedules the timeout on the clock instead.
    func monotonicDeadline(after delay: Duration) -> UInt64?
    /// Starts the async `work` in a task `delay` from now, as a job of the clock (a poll that
    /// waits for the network between two waits on the clock); cancelling the returned value
    /// before then means it never starts, and after cancels its task. A ``ManualClock`` counts
    /// such tasks until they end, so a test can wait for them before it moves time on.
    @discardableResult
    func task(after delay: Duration, _ work: @escaping @Sendable () async -> Void) -> Cancellation
    /// Counts one wait (by `+1` when it begins, `-1` when a job of this clock ends it) that only
    /// a job already scheduled on the clock can end, as a task asleep on it: a
    /// ``ManualClock``'s runner then moves time on at once instead of waiting, in real time,
    /// for work it takes to run on another thread (`location:current()` waiting for a fix a
    /// replay has scheduled). Nothing for a clock that follows real time.
    func countClockWait(_ change: Int)
}

extension ServiceClock {
    public func monotonicDeadline(after delay: Duration) -> UInt64? { nil }

    public func countClockWait(_ change: Int) {}

    @discardableResult
    public func task(after delay: Duration, _ work: @escaping @Sendable () async -> Void) -> Cancellation {
        ClockTask.start(on: self, after: delay, work)
    }

    /// Waits `seconds`; false when the task was cancelled meanwhile (so a loop can end).
    public func pause(seconds: Double) async -> Bool {
        do {
            try await sleep(for: .seconds(seconds: seconds))
            return true
        } catch {
            return false
        }
    }
}

extension Duration {
    /// `seconds` as a duration, saturating instead of trapping: NaN and negatives are zero, and
    /// anything past a century is a century (values that come from settings, files or scripts).
    public static func seconds(seconds: Double) -> Duration {
        guard seconds.isFinite, seconds > 0 else { return seconds == .infinity ? .century : .zero }
        guard seconds < 3_155_760_000 else { return .century }
        let whole = seconds.rounded(.down)
        return .seconds(Int64(whole)) + .nanoseconds(Int64((seconds - whole) * 1e9))
    }

    /// A hundred years: the longest wait a clock takes.
    public static let century = Duration.seconds(3_155_760_000)

    /// The duration in seconds, as a floating-point number.
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
