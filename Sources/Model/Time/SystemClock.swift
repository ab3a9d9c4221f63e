import Dispatch
import Glibc

/// The production ``ServiceClock``: `CLOCK_MONOTONIC` and `CLOCK_REALTIME`, with scheduling on a
/// Dispatch timer unless the host gives its own scheduler (its event loop, so a host timer fires
/// on the loop without a hop).
///
/// This is the only place outside tests that reads the system's time.
public final class SystemClock: ServiceClock {
    /// Runs work after a delay; returns what cancels it.
    public typealias Scheduler = @Sendable (Duration, @escaping @Sendable () -> Void) -> Cancellation

    private let scheduler: Scheduler?
    private let origin: Duration

    /// A clock that schedules on `scheduler`, or on a Dispatch timer when it is nil.
    public init(scheduler: Scheduler? = nil) {
        self.scheduler = scheduler
        origin = Self.monotonic()
    }

    /// A process-wide clock on Dispatch timers, for code that runs without a host.
    public static let shared = SystemClock()

    public var uptime: Duration { Self.monotonic() - origin }

    public var wallTime: Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
    }

    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Cancellation {
        if let scheduler { return scheduler(max(delay, .zero), work) }
        let cancellation = Cancellation()
        let nanoseconds = Int(clamping: max(delay, .zero).inNanoseconds)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            if !cancellation.isCancelled { work() }
        }
        return cancellation
    }

    public func sleep(for delay: Duration) async throws {
        try await Task.sleep(for: max(delay, .zero))
    }

    public func monotonicDeadline(after delay: Duration) -> UInt64? {
        let (sum, overflow) = Self.monotonic().inNanoseconds.addingReportingOverflow(max(delay, .zero).inNanoseconds)
        return overflow ? UInt64(Int64.max) : UInt64(sum)
    }

    private static func monotonic() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating at `Int64`'s range.
    public var inNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowed) = product.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowed ? (seconds < 0 ? .min : .max) : sum
    }
}
