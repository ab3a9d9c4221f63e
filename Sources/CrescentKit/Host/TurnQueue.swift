import NIOCore

/// The turns a host queues for itself on its loop (`Host.enqueue`), run in order by one loop job
/// per batch.
///
/// Handing each turn to NIO on its own costs a lock, a task and an `epoll_wait` per turn, which is
/// most of an awaited call that a service answers at once. Queued here, turns run back to back:
/// one loop job runs what is queued, including turns those turns queue, up to ``batch`` of them,
/// then hands the rest to a fresh loop job so timers and I/O get their share in between.
/// Each job is still a turn of its own (flush, render, deliveries and the exit rule after it).
final class TurnQueue {
    /// The most turns one loop job runs before letting the loop serve other work.
    static let batch = 64

    private var jobs: [(Host) -> Void] = []
    private var head = 0
    private var scheduled = false

    /// Queues `job`; schedules a loop job to run the queue unless one is already waiting.
    func append(_ job: @escaping (Host) -> Void, for host: Host) {
        host.loop.assertInEventLoop()
        jobs.append(job)
        schedule(host)
    }

    private func schedule(_ host: Host) {
        guard !scheduled else { return }
        scheduled = true
        let bound = NIOLoopBound(host, eventLoop: host.loop)
        host.gate.execute(on: host.loop) { bound.value.turnQueue.run(bound.value) }
    }

    /// Runs up to ``batch`` queued turns in order, then schedules itself again if any are left.
    private func run(_ host: Host) {
        scheduled = false
        var ran = 0
        while head < jobs.count, ran < Self.batch {
            let job = jobs[head]
            head += 1
            ran += 1
            host.runTurn(job)
        }
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        } else {
            schedule(host)
        }
    }
}
