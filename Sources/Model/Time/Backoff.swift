/// Waits that grow after each failure (gpsd reconnects, a device reopened, a plugin process
/// restarted), from `initial` to `maximum`, doubling, on the service's clock.
///
/// ```swift
/// var backoff = Backoff(initial: .seconds(1), maximum: .seconds(60))
/// while !connected { guard await backoff.wait(on: clock) else { return } ... }
/// backoff.reset()
/// ```
public struct Backoff: Sendable {
    public let initial: Duration
    public let maximum: Duration
    /// The delay the next ``wait(on:)`` sleeps.
    public private(set) var next: Duration

    public init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(5)) {
        self.initial = initial
        self.maximum = maximum
        next = initial
    }

    /// Sleeps on `clock` for the current delay and doubles it; false when cancelled.
    public mutating func wait(on clock: any ServiceClock) async -> Bool {
        let delay = advance()
        do {
            try await clock.sleep(for: delay)
            return true
        } catch {
            return false
        }
    }

    /// The delay to wait now, doubling the next one, without sleeping (for waits scheduled as
    /// clock jobs rather than slept in a task).
    public mutating func advance() -> Duration {
        let delay = next
        next = min(next * 2, maximum)
        return delay
    }

    /// Back to the shortest delay, after a success.
    public mutating func reset() { next = initial }
}
