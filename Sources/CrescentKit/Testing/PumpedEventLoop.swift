import Dispatch
import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An event loop run by the thread that made it, a batch at a time: the loop of `crescent test`.
///
/// Work submitted from any thread (a service's answer, a store write committing) waits in a queue
/// until the owning thread calls ``runPending()``, or ``waitForWork(timeout:)`` and then runs
/// it. Unlike `EmbeddedEventLoop` it takes work from other threads; unlike a NIO thread it never
/// runs on its own, so a test decides when the host's turns happen (between the steps of virtual
/// time) and can run them from inside a Lua call (`clock.advance` in a spec).
///
/// Timed tasks (`scheduleTask`) follow real time; the host never uses them with a manual clock.
final class PumpedEventLoop: EventLoop, Sendable {
    private let owner = pthread_self()
    private let queue = Mutex<[@Sendable () -> Void]>([])
    private let arrived = DispatchSemaphore(value: 0)

    init() {}

    var inEventLoop: Bool { pthread_equal(owner, pthread_self()) != 0 }

    var now: NIODeadline { .now() }

    func execute(_ task: @escaping @Sendable () -> Void) {
        queue.withLock { $0.append(task) }
        arrived.signal()
    }

    /// Runs every queued task, and those they queue, until none is left; returns how many ran.
    /// Call it on the owning thread only.
    @discardableResult
    func runPending() -> Int {
        var ran = 0
        while true {
            let batch = queue.withLock { queue in
                defer { queue.removeAll() }
                return queue
            }
            if batch.isEmpty { return ran }
            for task in batch { task() }
            ran += batch.count
        }
    }

    /// True when work is queued.
    var hasWork: Bool { queue.withLock { !$0.isEmpty } }

    /// Waits until work is queued or `timeout` seconds have passed; true when work is queued.
    func waitForWork(timeout: Double) -> Bool {
        let deadline = DispatchTime.now() + .nanoseconds(Int(max(0, timeout) * 1e9))
        // The semaphore counts every task queued, also those already run: wake until one is there.
        while !hasWork {
            if arrived.wait(timeout: deadline) == .timedOut { return hasWork }
        }
        return true
    }

    @discardableResult
    func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        let promise: EventLoopPromise<T> = makePromise()
        let cancelled = Atomic<Bool>(false)
        let delay = max(0, deadline.uptimeNanoseconds.subtractingReportingOverflow(NIODeadline.now().uptimeNanoseconds).partialValue)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(min(delay, UInt64(Int.max))))) { [self] in
            execute {
                guard !cancelled.load(ordering: .acquiring) else { return }
                do { promise.assumeIsolated().succeed(try task()) } catch { promise.fail(error) }
            }
        }
        return Scheduled(promise: promise) {
            cancelled.store(true, ordering: .releasing)
            promise.fail(EventLoopError.cancelled)
        }
    }

    @discardableResult
    func scheduleTask<T>(in delay: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        scheduleTask(deadline: .now() + delay, task)
    }

    func shutdownGracefully(queue callbackQueue: DispatchQueue, _ callback: @escaping @Sendable ((any Error)?) -> Void) {
        callbackQueue.async { callback(nil) }
    }

    func preconditionInEventLoop(file: StaticString, line: UInt) {
        precondition(inEventLoop, "not on the test loop's thread", file: file, line: line)
    }

    func preconditionNotInEventLoop(file: StaticString, line: UInt) {
        precondition(!inEventLoop, "on the test loop's thread", file: file, line: line)
    }
}
