import AsyncHTTPClient
import Foundation
import Model
import NIOCore
import NIOHTTP1
import Synchronization

/// One request of ``HTTPService`` from its first hop to its answer, following redirects.
///
/// A 301, 302, 303, 307 or 308 answer with a `Location` is followed up to
/// ``HTTPExchange/maxRedirects`` times; a URL seen before in the exchange is a loop. Each target
/// is checked like a script's URL (``HTTPTarget``): a server that redirects to `javascript:`,
/// a port past 65535 or garbage gets a `network` error naming both URLs, never a connection
/// attempt. A 303 (and a 301 or 302 answering a POST) continues as a GET without a body, as
/// browsers do; `Authorization` and `Cookie` are not sent on to another host.
///
/// The completion runs once: with the answer, an error, `timeout` when the clock's timer fired
/// first, or AsyncHTTPClient's cancellation after ``cancel()``.
final class HTTPExchange: Sendable {
    static let maxRedirects = 10
    static let redirectStatuses: Set<UInt> = [301, 302, 303, 307, 308]

    /// Checks the next hop and picks its client; the exchange does not keep the service alive
    /// (a host that exits releases it while a request is still being cancelled).
    private let prepareHop: @Sendable (HTTPRequestSpec) throws(ServiceError) -> HTTPService.Hop
    /// The first URL as messages show it (``HTTPTarget/redacted(_:)``).
    private let url: String
    private let timeout: Double
    private let limit: HTTPFailure.BodyLimit
    /// The monotonic deadline every hop is given, when the client keeps time.
    private let deadline: UInt64?
    private let completion: @Sendable (Result<HTTPResponse, ServiceError>) -> Void
    private let state = Mutex(State())

    private struct State {
        var task: HTTPClient.Task<ResponseCollector.Collected>?
        /// Whether the hop in flight is a second attempt (``HTTPExchange/mayRetry``): each hop
        /// of a redirect may go out on a kept-alive connection the server is closing, so each
        /// gets its own retry.
        var retried = false
        var visited: Set<String> = []
        var cancelled = false
        var timedOut = false
        var timer: Cancellation?
    }

    init(service: HTTPService, url: String, timeout: Double, limit: HTTPFailure.BodyLimit, deadline: UInt64?,
         completion: @escaping @Sendable (Result<HTTPResponse, ServiceError>) -> Void) {
        prepareHop = { [weak service] request throws(ServiceError) in
            guard let service else { throw ServiceError(.cancelled, "the http service has shut down") }
            return try service.prepareHop(request)
        }
        self.url = url
        self.timeout = timeout
        self.limit = limit
        self.deadline = deadline
        self.completion = completion
    }

    /// The clock's timer for the whole exchange (when the client does not keep the deadline).
    var timer: Cancellation? {
        get { state.withLock { $0.timer } }
        set { state.withLock { $0.timer = newValue } }
    }

    /// Stops the hop in flight; its failure is the exchange's answer.
    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }

    /// The clock's deadline passed: the hop in flight is stopped and the answer is `timeout`.
    func timeOut() {
        state.withLock { $0.timedOut = true }
        cancel()
    }

    /// Sends one hop of `request` (already checked as `hop`).
    func send(_ request: HTTPRequestSpec, _ hop: HTTPService.Hop) {
        let collector = ResponseCollector(maxBytes: limit.maxBytes, method: hop.request.method)
        let task = if let deadline {
            hop.client.execute(request: hop.request, delegate: collector, deadline: .uptimeNanoseconds(deadline))
        } else {
            hop.client.execute(request: hop.request, delegate: collector)
        }
        let cancelled = state.withLock { state in
            state.task = task
            state.visited.insert(request.url)
            return state.cancelled
        }
        if cancelled { task.cancel() }
        task.futureResult.whenComplete { [self] result in
            if case .failure(let error) = result, !collector.answered, mayRetry(request, after: error) {
                send(request, hop)
            } else {
                answer(request, result)
            }
        }
    }

    /// Whether `request`, whose connection closed before any of the answer arrived, is sent once
    /// more: a server may close a kept-alive connection it thinks idle just as a request is sent
    /// on it (without `Connection: close`, nothing announces it). As browsers and curl do, a
    /// request that changes nothing when repeated (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) is
    /// sent again once; the client's pool has dropped the closed connection, so the second try
    /// goes out on another. A POST or PATCH is never repeated (the server may have acted on it).
    private func mayRetry(_ request: HTTPRequestSpec, after error: any Error) -> Bool {
        guard Self.idempotentMethods.contains(request.method.uppercased()), Self.isClosedConnection(error) else { return false }
        return state.withLock { state in
            guard !state.retried, !state.cancelled, !state.timedOut else { return false }
            state.retried = true
            return true
        }
    }

    static let idempotentMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]

    /// A connection the server closed or reset: what a request raced with an idle close sees.
    private static func isClosedConnection(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPClientError:
            return error == .remoteConnectionClosed
        case let error as ChannelError:
            return error == .ioOnClosedChannel || error == .eof || error == .outputClosed
        case let error as IOError:
            return [ECONNRESET, EPIPE].contains(error.errnoCode)
        default:
            return false
        }
    }

    private func answer(_ request: HTTPRequestSpec, _ result: Result<ResponseCollector.Collected, any Error>) {
        switch result {
        case .failure(let error):
            let timedOut = state.withLock { $0.timedOut }
            let cause = timedOut ? HTTPClientError.deadlineExceeded : error
            // A hop after a redirect is named too: the first URL alone hides which server failed.
            let hop = clipped(HTTPTarget.redacted(request.url))
            let named = hop == clipped(url) ? url : "\(url) (redirected to \(hop))"
            finish(.failure(HTTPFailure.serviceError(cause, url: named, timeout: timeout, limit: limit)))
        case .success(let response):
            do throws(ServiceError) {
                if let next = try redirect(from: request, response.head) {
                    let hop = try prepareHop(next)
                    state.withLock { $0.retried = false }
                    send(next, hop)
                    return
                }
            } catch {
                finish(.failure(error))
                return
            }
            finish(.success(HTTPResponse(status: Int(response.head.status.code),
                                         headers: HTTPResponse.joinedHeaders(response.head.headers),
                                         body: response.body, url: HTTPTarget.redacted(request.url))))
        }
    }

    private func finish(_ result: Result<HTTPResponse, ServiceError>) {
        state.withLock { $0.timer }?.cancel()
        completion(result)
    }

    /// The request a redirect answer asks for next; nil when `response` is no redirect.
    private func redirect(from request: HTTPRequestSpec, _ response: HTTPResponseHead) throws(ServiceError) -> HTTPRequestSpec? {
        guard Self.redirectStatuses.contains(response.status.code), let location = response.headers.first(name: "location") else {
            return nil
        }
        let from = clipped(HTTPTarget.redacted(request.url))
        guard let base = URL(string: request.url), let target = URL(string: location, relativeTo: base)?.absoluteURL else {
            throw ServiceError(.network, "\(from) redirects to '\(clipped(HTTPTarget.redacted(location)))', which is not a URL")
        }
        var next = request
        next.url = target.absoluteString
        do throws(ServiceError) {
            _ = try HTTPTarget(next.url)
        } catch {
            throw ServiceError(.network, "\(from) redirects to a URL that cannot be fetched: \(error.message)")
        }
        let (count, seen) = state.withLock { ($0.visited.count, $0.visited.contains(next.url)) }
        if seen { throw ServiceError(.network, "\(clipped(url)) redirects in a loop") }
        if count > Self.maxRedirects { throw ServiceError(.network, "\(clipped(url)) redirects more than \(Self.maxRedirects) times") }
        let code = response.status.code
        if code == 303 || ((code == 301 || code == 302) && request.method.uppercased() == "POST") {
            next.method = "GET"
            next.body = nil
        }
        if base.host?.lowercased() != target.host?.lowercased() || base.port != target.port || base.scheme != target.scheme {
            next.headers = next.headers.filter { !["authorization", "cookie"].contains($0.name.lowercased()) }
        }
        return next
    }
}
