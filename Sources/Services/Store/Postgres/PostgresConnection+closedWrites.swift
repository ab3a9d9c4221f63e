import NIOCore
import PostgresNIO

extension PostgresConnection {
    /// `answer`, the future of a request already made on this connection, or a failure when the
    /// connection turns out to have closed under the request.
    ///
    /// PostgresNIO hands each request to its channel with `write(_:promise: nil)`. On a channel
    /// that has closed meanwhile (the server went away, and the backend's queue has not yet heard),
    /// the write is dropped with its error, and the request's own future never completes: a wait
    /// on it would hang for good. A check queued on the connection's loop after the request was
    /// made tells the cases apart. Open there, the channel took the request before the check ran
    /// (both were queued from this thread, in order), and the connection answers it or fails it
    /// when it closes. Closed there, the connection has failed every request it took, so a request
    /// still unanswered was dropped, and this fails it (a late second answer is ignored).
    func answerOrClosed<Answer: Sendable>(_ answer: EventLoopFuture<Answer>) -> EventLoopFuture<Answer> {
        let settled = eventLoop.makePromise(of: Answer.self)
        answer.cascade(to: settled)
        eventLoop.execute { [self] in
            if isClosed { settled.fail(PostgresError.connectionClosed) }
        }
        return settled.futureResult
    }
}
