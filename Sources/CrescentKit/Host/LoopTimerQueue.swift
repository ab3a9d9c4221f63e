import Model
import NIOCore
import Synchronization

/// The jobs a host's clock schedules (every timer, cron and service timeout), kept in one queue
/// of its own with a single task on the loop for the earliest of them.
///
/// NIO's scheduler removes a cancelled task by searching its heap from the start, so cancelling
/// many schedules cost O(n) each: 40,000 `timer.cron` with the same due time took 65 s of the
/// loop to cancel. Here a cancel only marks its job (O(1)); cancelled jobs are dropped
/// when they reach the head, or all at once when they are more than half the queue, so a cancel
/// costs O(log n) amortized. Jobs due at the same time run in the order they were scheduled.
final class LoopTimerQueue: Sendable {
    /// A job waiting in the heap; its work is in ``State/work`` until it runs or is cancelled.
    private struct Job: Sendable, HeapOrdered {
        let due: NIODeadline
        let order: UInt64
        let cancellation: Cancellation

        func runsBefore(_ other: Job) -> Bool {
            due != other.due ? due < other.due : order < other.order
        }
    }

    private struct State {
        var heap = JobHeap<Job>()
        var nextOrder: UInt64 = 0
        /// The work of each job that has neither run nor been cancelled, by its order: let go of
        /// at the cancel, not when the job leaves the heap (what it holds, a host's timer holding
        /// the host, is freed at once).
        var work: [UInt64: @Sendable () -> Void] = [:]
        /// The loop task for the head of the queue, and when it fires.
        var armed: (due: NIODeadline, task: Scheduled<Void>)?

        /// Jobs in the heap that were cancelled and not yet dropped.
        var cancelled: Int { heap.count - work.count }
    }

    /// Below this size the queue is never swept: the head's drop is enough.
    static let sweepFloor = 64

    private let state = Mutex(State())
    private let loop: any EventLoop
    private let gate: LoopGate

    init(loop: any EventLoop, gate: LoopGate) {
        self.loop = loop
        self.gate = gate
    }

    /// Runs `work` on the loop `delay` from now, unless cancelled first (from any thread).
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Cancellation {
        let cancellation = Cancellation()
        let due = NIODeadline.now() + .nanoseconds(max(delay, .zero).inNanoseconds)
        let order: UInt64? = state.withLock { state in
            let order = state.nextOrder
            state.nextOrder += 1
            state.heap.push(Job(due: due, order: order, cancellation: cancellation))
            state.work[order] = work
            guard arm(&state) else {
                // The host has finished: nothing will run it.
                state.work[order] = nil
                return nil
            }
            return order
        }
        guard let order else {
            cancellation.cancel()
            return cancellation
        }
        cancellation.onCancel { [weak self] in self?.cancelled(order) }
        return cancellation
    }

    /// How many jobs wait (cancelled ones not counted).
    var count: Int { state.withLock { $0.work.count } }

    private func cancelled(_ order: UInt64) {
        state.withLock { state in
            // A job that already ran has no work left: nothing to drop.
            guard state.work.removeValue(forKey: order) != nil else { return }
            if state.heap.count >= Self.sweepFloor, state.cancelled * 2 > state.heap.count {
                let work = state.work
                state.heap.removeAll { work[$0.order] == nil }
            }
        }
    }

    /// Arms the loop's task for the head, when none is armed for it or earlier; false once the
    /// gate is closed.
    private func arm(_ state: inout State) -> Bool {
        while let head = state.heap.first, state.work[head.order] == nil { _ = state.heap.pop() }
        guard let head = state.heap.first else { return true }
        if let armed = state.armed, armed.due <= head.due { return true }
        if let armed = state.armed { gate.cancel(armed.task) }
        guard let task = gate.scheduleTask(on: loop, in: head.due - .now(), { [weak self] in self?.fire() }) else {
            state.armed = nil
            return false
        }
        state.armed = (head.due, task)
        return true
    }

    /// On the loop: runs every job now due, in order, then arms the task for the next.
    private func fire() {
        let due: [(Cancellation, @Sendable () -> Void)] = state.withLock { state in
            state.armed = nil
            let now = NIODeadline.now()
            var due: [(Cancellation, @Sendable () -> Void)] = []
            while let head = state.heap.first, head.due <= now {
                _ = state.heap.pop()
                // Taken out under the lock: a cancel that comes later finds nothing to drop.
                if let body = state.work.removeValue(forKey: head.order) { due.append((head.cancellation, body)) }
            }
            _ = arm(&state)
            return due
        }
        for (cancellation, body) in due {
            // A job run before it in this batch may have cancelled it.
            guard !cancellation.isCancelled else { continue }
            cancellation.dropHandler()
            body()
        }
    }
}
