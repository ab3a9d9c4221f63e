import Model
import Synchronization
import Testing

/// A ``Reply``: one answer counts, from any thread; cancelling is a flag the service may read and
/// runs the handler that stops work in flight.
@Suite struct ReplyTests {
    final class Answers: Sendable {
        let received = Mutex<[Result<Value, ServiceError>]>([])
    }

    @Test func onlyTheFirstAnswerIsDelivered() async {
        let answers = Answers()
        let reply = Reply { result in answers.received.withLock { $0.append(result) } }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask { reply(.success(.integer(Int64(index)))) }
            }
        }
        reply(.failure(ServiceError(.internal, "too late")))
        let received = answers.received.withLock { $0 }
        #expect(received.count == 1)
        guard case .success(.integer(let first)) = received.first else {
            Issue.record("the first answer is one of the successes: \(received)")
            return
        }
        #expect((0..<8).contains(first))
    }

    /// An answered reply lets go of its cancel handler, and so of the work the handler would stop
    /// (whose completion usually holds the reply: an HTTP request's exchange did, for good).
    @Test(arguments: [true, false])
    func anAnsweredReplyLetsGoOfItsCancelHandler(handlerFirst: Bool) {
        final class Work: Sendable {}
        weak var observed: Work?
        let reply = Reply { _ in }
        do {
            let work = Work()
            observed = work
            if handlerFirst {
                reply.onCancel { withExtendedLifetime(work) {} }
                #expect(observed != nil)
                reply(.success(.integer(1)))
            } else {
                reply(.success(.integer(1)))
                reply.onCancel { withExtendedLifetime(work) {} }
            }
        }
        #expect(observed == nil)
        #expect(reply.cancel(), "a cancel after the answer still marks it, with nothing to run")
    }

    @Test func cancellingIsAFlagAndDoesNotAnswer() {
        let answers = Answers()
        let reply = Reply { result in answers.received.withLock { $0.append(result) } }
        #expect(!reply.isCancelled)
        reply.cancel()
        #expect(reply.isCancelled)
        #expect(answers.received.withLock { $0.isEmpty }, "the host answers a cancelled call itself")
        reply(.success("late"))
        #expect(answers.received.withLock { $0.count } == 1, "a service may still answer once")
    }

    @Test func aReplyingMethodKeepsItsBodyThroughTheErasedDeclaration() async throws {
        final class Echo: Sendable {}
        let interface = Interface<Echo>(name: "echo", summary: "Echoes.") { d in
            d.method("say", [.init("text", .string, "What to say.")], returns: "the text", "Says it.",
                     replying: { _, arguments, reply in reply(.success(arguments[0])) })
        }.erased
        let say = try #require(interface.method("say"))
        #expect(say.hasCompletion)
        guard case .replying(let run) = say.body else {
            Issue.record("say answers through a reply")
            return
        }
        let answers = Answers()
        run(Echo(), Arguments(["hi"]), Reply { result in answers.received.withLock { $0.append(result) } })
        #expect(answers.received.withLock { $0.count } == 1)
        #expect(try answers.received.withLock { $0 }.first?.get() == "hi")
    }

    @Test func cancellingRunsTheCancellationHandlerOnceWhicheverComesFirst() {
        let stops = Mutex(0)
        let reply = Reply { _ in }
        reply.onCancel { stops.withLock { $0 += 1 } }
        #expect(stops.withLock { $0 } == 0)
        reply.cancel()
        reply.cancel()
        #expect(stops.withLock { $0 } == 1)
        #expect(reply.isCancelled)

        let early = Reply { _ in }
        early.cancel()
        early.onCancel { stops.withLock { $0 += 10 } }
        #expect(stops.withLock { $0 } == 11, "a handler given after the cancel runs at once")
    }
}
