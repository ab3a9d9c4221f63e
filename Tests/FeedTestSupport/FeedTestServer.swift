import HTTPTestServer
import Synchronization

/// An HTTP/1.1 server on 127.0.0.1 (a free port, an ``HTTPTestServer``) that serves feed
/// documents the tests set, for the feeds tests of the services and of the scripts.
///
/// Each path answers what was last set for it: a document with its `ETag` and `Last-Modified`
/// (a request whose `If-None-Match` or `If-Modified-Since` matches gets `304 Not Modified`), a
/// bare status, or a redirect. Unknown paths are 404. Every request is recorded, so tests can see
/// what the client sent.
///
/// ```swift
/// let server = try await FeedTestServer.start()
/// server.serve("/feed.xml", FeedTestServer.Document(body: rss, etag: "\"v1\""))
/// // fetch server.url("/feed.xml") …
/// await server.stop()
/// ```
public final class FeedTestServer: Sendable {
    /// What a path answers.
    public enum Answer: Sendable {
        case document(Document)
        case status(Int)
        case redirect(to: String)
        /// No answer at all: the connection stays open until the client gives up.
        case silence
        /// Each request gets the next answer; the last one repeats.
        indirect case sequence([Answer])
    }

    /// A document and its validators.
    public struct Document: Sendable {
        public var body: String
        public var contentType: String
        public var etag: String?
        public var lastModified: String?

        public init(body: String, contentType: String = "application/xml", etag: String? = nil, lastModified: String? = nil) {
            self.body = body
            self.contentType = contentType
            self.etag = etag
            self.lastModified = lastModified
        }
    }

    /// One request as received.
    public struct Request: Sendable {
        public let path: String
        /// Header names in lower case.
        public let headers: [String: String]
        /// What the server answered (0: nothing).
        public let status: Int
    }

    private let answers = Mutex<[String: Answer]>([:])
    private let log = Mutex<[Request]>([])
    private let server = Mutex<HTTPTestServer?>(nil)

    private init() {}

    /// Starts a server on a free loopback port.
    public static func start() async throws -> FeedTestServer {
        let feeds = FeedTestServer()
        // The server's answer reaches the feeds weakly: they hold the server.
        let server = try await HTTPTestServer.start { [weak feeds] request in
            var headers: [String: String] = [:]
            for (name, value) in request.headers { headers[name.lowercased()] = value }
            let path = String(request.uri.prefix { $0 != "?" })
            guard let answer = feeds?.respond(path: path, headers: headers) else { return .silence }
            return .respond(status: answer.status, headers: answer.headers + [("Connection", "close")], body: Array(answer.body.utf8))
        }
        feeds.server.withLock { $0 = server }
        return feeds
    }

    /// The port it listens on.
    public var port: Int { server.withLock { $0?.port ?? 0 } }

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Makes `path` answer `answer` from now on.
    public func serve(_ path: String, _ answer: Answer) {
        answers.withLock { $0[path] = answer }
    }

    /// Makes `path` serve `document`.
    public func serve(_ path: String, _ document: Document) {
        serve(path, .document(document))
    }

    /// The requests received so far, in order.
    public var requests: [Request] { log.withLock { $0 } }

    /// The requests for `path`.
    public func requests(for path: String) -> [Request] { requests.filter { $0.path == path } }

    /// Stops listening.
    public func stop() async {
        await server.withLock { $0 }?.stop()
    }

    /// The answer to a GET of `path` with `headers`, recorded; nil for silence.
    private func respond(path: String, headers: [String: String]) -> (status: Int, headers: [(String, String)], body: String)? {
        let answer = answers.withLock { answers -> Answer? in
            guard case .sequence(let queue)? = answers[path] else { return answers[path] }
            if queue.count > 1 { answers[path] = .sequence(Array(queue.dropFirst())) }
            return queue.first
        }
        let response: (status: Int, headers: [(String, String)], body: String)
        switch answer {
        case nil:
            response = (404, [("Content-Type", "text/plain")], "not found")
        case .status(let status):
            response = (status, [("Content-Type", "text/plain")], "status \(status)")
        case .redirect(let location):
            response = (302, [("Location", location)], "")
        case .sequence:
            response = (500, [("Content-Type", "text/plain")], "a sequence inside a sequence")
        case .silence:
            log.withLock { $0.append(Request(path: path, headers: headers, status: 0)) }
            return nil
        case .document(let document):
            var validators: [(String, String)] = []
            if let etag = document.etag { validators.append(("ETag", etag)) }
            if let lastModified = document.lastModified { validators.append(("Last-Modified", lastModified)) }
            let unchanged = (document.etag != nil && headers["if-none-match"] == document.etag)
                || (document.etag == nil && document.lastModified != nil && headers["if-modified-since"] == document.lastModified)
            response = unchanged ? (304, validators, "") : (200, [("Content-Type", document.contentType)] + validators, document.body)
        }
        log.withLock { $0.append(Request(path: path, headers: headers, status: response.status)) }
        return response
    }
}
