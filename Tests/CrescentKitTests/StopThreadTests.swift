@testable import CrescentKit
import Testing

/// A stopped ``StopThread`` lets go of its signal handler and its deadlines. `crescent run`'s
/// handler and deadlines call the run's stop, which uses the stop thread itself and reaches the
/// host through its link: kept, they held the thread and the host after the run (LeakSanitizer,
/// `make sanitize`).
@Suite struct StopThreadTests {
    final class Held: Sendable {}

    @Test func aStoppedThreadLetsGoOfItsHandlerAndDeadlines() throws {
        weak var heldByHandler: Held?
        weak var heldByDeadline: Held?
        do {
            let thread = try StopThread.start()
            let forHandler = Held()
            let forDeadline = Held()
            heldByHandler = forHandler
            heldByDeadline = forDeadline
            // No signals: the handler is only kept, as a run's is until a signal comes.
            thread.take([]) { _ in thread.after(0) { _ = forHandler } }
            thread.after(600) { thread.after(0) { _ = forDeadline } }
            thread.stop()
        }
        #expect(heldByHandler == nil)
        #expect(heldByDeadline == nil)
    }
}
