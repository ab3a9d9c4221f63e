import Model
import NIOCore

/// The time limit of a plugin's calls in flight, with one clock job for all of them rather than
/// one per call (a job per call costs the loop a timer to arm and another to cancel on every
/// call). Confined to the host's loop.
///
/// The job fires at the earliest deadline, ends the calls past theirs through `expire`, and is
/// armed again for the next one. Deadlines are counted on the clock less the time a person took
/// to answer a question (``QuestionTime``): the loop, the calls and their answers waited on it.
final class CallDeadlines {
    private let clock: any ServiceClock
    private let loop: any EventLoop
    private let limit: Duration
    private let expire: (PluginCall) -> Void
    private var pending: [ObjectIdentifier: (deadline: Duration, call: PluginCall)] = [:]
    private var job: Cancellation?
    /// Whether the clock runs in real time, where questions can be asked (a virtual clock's
    /// time has no question in it).
    private let isRealTime: Bool

    init(clock: any ServiceClock, loop: any EventLoop, limit: Double, expire: @escaping (PluginCall) -> Void) {
        self.clock = clock
        self.loop = loop
        self.limit = .seconds(seconds: limit)
        self.expire = expire
        isRealTime = clock.monotonicDeadline(after: .zero) != nil
    }

    /// The clock's uptime less the time spent waiting on a person's answer: what a call's start
    /// (``add(_:since:)``) is read on.
    var now: Duration {
        let uptime = clock.uptime
        guard isRealTime else { return uptime }
        let excluded = Duration.nanoseconds(QuestionTime.shared.excludedNow)
        return uptime - min(excluded, uptime)
    }

    /// Starts the time limit of `call`, counted from `start` (a reading of ``now``; now by
    /// default); it ends when the call is answered (``remove(_:)``).
    func add(_ call: PluginCall, since start: Duration? = nil) {
        let now = self.now
        let deadline = (start ?? now) + limit
        pending[ObjectIdentifier(call)] = (deadline, call)
        if job == nil { arm(after: max(deadline - now, .zero)) }
    }

    func remove(_ call: PluginCall) {
        pending[ObjectIdentifier(call)] = nil
    }

    /// The calls added and not yet removed.
    var calls: [PluginCall] { pending.values.map(\.call) }

    /// Stops the clock job (the plugin has stopped).
    func cancelAll() {
        job?.cancel()
        job = nil
        pending.removeAll()
    }

    private func arm(after delay: Duration) {
        let bound = NIOLoopBound(self, eventLoop: loop)
        job = clock.schedule(after: delay) { onLoop(bound) { $0.sweep() } }
    }

    private func sweep() {
        job = nil
        let now = self.now
        let expired = pending.values.filter { $0.deadline <= now }.map(\.call)
        for call in expired {
            pending[ObjectIdentifier(call)] = nil
            if !call.isDone { expire(call) }
        }
        if let next = pending.values.map(\.deadline).min() { arm(after: max(next - now, .zero)) }
    }
}
