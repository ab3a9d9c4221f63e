@testable import CrescentKit
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// The gate every hop into a host's loop passes: after the host finishes, the loop may be shut
/// down, and nothing may reach it any more (NIO reports work sent to a shut-down loop, and is to
/// make it a crash).
@Suite struct LoopGateTests {
    private final class Count: Sendable {
        let value = Atomic(0)
    }

    /// A `Scheduled` whose cancel only counts that it reached the loop's side, and its promise
    /// (which the test completes: NIO traps on a promise left pending).
    private static func recordingScheduled() -> (Scheduled<Void>, Count, EventLoopPromise<Void>) {
        let cancels = Count()
        let promise = EmbeddedEventLoop().makePromise(of: Void.self)
        let scheduled = Scheduled(promise: promise) { cancels.value.add(1, ordering: .relaxed) }
        return (scheduled, cancels, promise)
    }

    @Test func anOpenGateCancelsOnTheLoop() {
        let (scheduled, cancels, promise) = Self.recordingScheduled()
        defer { promise.succeed(()) }
        LoopGate().cancel(scheduled)
        #expect(cancels.value.load(ordering: .relaxed) == 1)
    }

    @Test func aClosedGateLeavesTheLoopAloneWhenATimerIsCancelledAfterTeardown() {
        // A service that outlives its host (the feeds service released on the database's queue)
        // cancels its poller's timer after the loop has shut down.
        let (scheduled, cancels, promise) = Self.recordingScheduled()
        defer { promise.succeed(()) }
        let gate = LoopGate()
        gate.close()
        gate.cancel(scheduled)
        #expect(cancels.value.load(ordering: .relaxed) == 0)
    }
}
