import NIOCore
import Synchronization

/// The way into a host's loop from other threads, closed when the host finishes.
///
/// Services answer on their own threads and tasks, and an answer can come after the host has
/// finished, when the loop may already be shut down: NIO reports work scheduled on a shut-down
/// loop as an error (and is to make it a crash). Every hop from elsewhere passes this gate, which
/// the host closes on its loop as it finishes; the group is shut down only after that, so a hop
/// that gets through always finds the loop running, and a later one is dropped (a finished host
/// runs nothing anyway).
final class LoopGate: Sendable {
    private let isOpen = Mutex(true)

    init() {}

    /// Runs `job` on `loop` unless the gate is closed; false when it was dropped.
    @discardableResult
    func execute(on loop: any EventLoop, _ job: @escaping @Sendable () -> Void) -> Bool {
        isOpen.withLock { open in
            // Scheduling under the lock: close() cannot slip between the check and the hop.
            if open { loop.execute(job) }
            return open
        }
    }

    /// Schedules `job` on `loop` after `delay` unless the gate is closed; nil when it was dropped.
    func scheduleTask(on loop: any EventLoop, in delay: TimeAmount, _ job: @escaping @Sendable () -> Void) -> Scheduled<Void>? {
        isOpen.withLock { open in open ? loop.scheduleTask(in: delay, job) : nil }
    }

    /// Cancels `scheduled` unless the gate is closed. Cancelling from another thread hops to the
    /// loop (NIO fails the task's promise there), so after teardown, when the loop may be shut
    /// down, it is left alone: its job checks its own cancellation and the loop never runs it anyway.
    func cancel<T>(_ scheduled: Scheduled<T>) {
        isOpen.withLock { open in
            if open { scheduled.cancel() }
        }
    }

    /// Lets nothing more through.
    func close() {
        isOpen.withLock { $0 = false }
    }
}

/// A host, as work from any thread reaches it: on its loop, through its ``LoopGate``.
public struct HostLink: Sendable {
    let bound: NIOLoopBound<Host>
    let gate: LoopGate

    /// The host's loop.
    var eventLoop: any EventLoop { bound.eventLoop }

    /// Runs `job` on the loop as part of a turn: at once when called on the loop (inside the
    /// current turn, or as a turn of its own between turns: a clock job firing, a service
    /// reporting on the loop), else as a turn on the loop, unless the host has finished.
    public func turn(_ job: @escaping @Sendable (Host) -> Void) {
        if bound.eventLoop.inEventLoop {
            bound.value.runTurn(job)
        } else {
            let bound = bound
            gate.execute(on: bound.eventLoop) { bound.value.runTurn(job) }
        }
    }

    /// Runs `job` on the loop as a turn of its own, after everything already queued there (also
    /// when called on the loop), unless the host has finished; false when it was dropped.
    @discardableResult
    public func later(_ job: @escaping @Sendable (Host) -> Void) -> Bool {
        let bound = bound
        return gate.execute(on: bound.eventLoop) { bound.value.runTurn(job) }
    }

    /// Runs `job` with the host on its loop, outside any turn, unless the host has finished.
    public func onLoop(_ job: @escaping @Sendable (Host) -> Void) {
        let bound = bound
        if bound.eventLoop.inEventLoop {
            job(bound.value)
        } else {
            gate.execute(on: bound.eventLoop) { job(bound.value) }
        }
    }
}
