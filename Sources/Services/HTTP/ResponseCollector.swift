import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import Synchronization

/// Collects one response of ``HTTPExchange`` with at most `maxBytes` of body, into the array the
/// response hands on.
///
/// AsyncHTTPClient's own collector grows a buffer of its own that was then copied into an array,
/// so a body peaked at more than three times its size once the script had its string. Here the
/// body goes straight into one array (of exactly the announced size when there is a
/// `Content-Length`); with the script's copy, a body costs about twice its size at its peak. A
/// body that passes `maxBytes`, or announces that it will, fails with ``TooBig`` at once.
///
/// It also tells whether any of the answer arrived (``answered``): a request whose connection
/// closed before the first byte can be sent again.
final class ResponseCollector: HTTPClientResponseDelegate, Sendable {
    typealias Response = Collected

    /// The status, headers and body of a complete response.
    struct Collected: Sendable {
        let head: HTTPResponseHead
        let body: [UInt8]
    }

    /// The body passed `maxBytes`.
    struct TooBig: Error {}

    private enum State {
        case waiting
        case receiving(HTTPResponseHead, Body)
        case failed
        case done
    }

    /// The body so far, in one array: reserved at the announced size, else grown as arrays
    /// grow (a large array's pages are the system's until written, so doubling its capacity
    /// does not double what it holds in memory).
    private struct Body {
        var bytes: [UInt8] = []

        init(announced: Int?) {
            if let announced { bytes.reserveCapacity(announced) }
        }

        mutating func append(_ buffer: ByteBuffer) {
            bytes.append(contentsOf: buffer.readableBytesView)
        }
    }

    private let maxBytes: Int
    private let isHead: Bool
    private let state = Mutex(State.waiting)

    init(maxBytes: Int, method: HTTPMethod) {
        self.maxBytes = maxBytes
        isHead = method == .HEAD
    }

    /// Whether any part of the answer (its head) has arrived.
    var answered: Bool {
        state.withLock { state in
            if case .waiting = state { return false }
            return true
        }
    }

    func didReceiveHead(task: HTTPClient.Task<Collected>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let announced = isHead ? nil : head.headers.first(name: "content-length").flatMap { Int($0) }
        if let announced, announced > maxBytes {
            state.withLock { $0 = .failed }
            return task.eventLoop.makeFailedFuture(TooBig())
        }
        state.withLock { $0 = .receiving(head, Body(announced: announced)) }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Collected>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let fits = state.withLock { state -> Bool in
            guard case .receiving(let head, var body) = state else { return true }
            guard body.bytes.count + buffer.readableBytes <= maxBytes else {
                state = .failed
                return false
            }
            state = .done  // so that `body` is the only reference while it grows
            body.append(buffer)
            state = .receiving(head, body)
            return true
        }
        return fits ? task.eventLoop.makeSucceededVoidFuture() : task.eventLoop.makeFailedFuture(TooBig())
    }

    func didReceiveError(task: HTTPClient.Task<Collected>, _ error: any Error) {}

    func didFinishRequest(task: HTTPClient.Task<Collected>) throws -> Collected {
        try state.withLock { state throws -> Collected in
            switch state {
            case .receiving(let head, let body):
                state = .done
                return Collected(head: head, body: body.bytes)
            case .failed:
                throw TooBig()
            case .waiting, .done:
                throw HTTPClientError.remoteConnectionClosed
            }
        }
    }
}
