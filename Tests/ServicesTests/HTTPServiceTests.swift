import AsyncHTTPClient
import HTTPTestServer
import Model
@testable import Services
import Synchronization
import Testing

/// The http service against real servers the tests start on 127.0.0.1: statuses, headers both
/// ways, redirects and loops, timeouts, size limits, refused connections, cancellation and bad
/// URLs. Each test waits a few seconds at most.
@Suite struct HTTPServiceTests {
    @Test func everyStatusIsAResultWithItsBody() async throws {
        try await withServer({ request in
            let status = Int(request.uri.split(separator: "/").last ?? "") ?? 400
            return .respond(status: status, body: Array("status \(status)".utf8))
        }) { http, server in
            for status in [200, 201, 304, 404, 500] {
                let response = try await http.fetch(HTTPRequestSpec(url: "\(server.baseURL)/status/\(status)"))
                #expect(response.status == status)
                // A 304 has no body by definition (the server leaves it out).
                #expect(response.body == (status == 304 ? [] : Array("status \(status)".utf8)))
                #expect(response.url == "\(server.baseURL)/status/\(status)")
            }
        }
    }

    @Test func headersGoOutAsGivenAndComeBackLowerCasedAndJoined() async throws {
        try await withServer({ request in
            .respond(status: 200, headers: [("X-Echo", request.header("x-token") ?? "none"), ("Set-Cookie", "a=1"),
                                            ("Set-Cookie", "b=2"), ("ETag", "\"v1\"")])
        }) { http, server in
            let request = HTTPRequestSpec(url: server.baseURL + "/", headers: [("X-Token", "secret"), ("If-None-Match", "\"v0\"")])
            let response = try await http.fetch(request)
            #expect(response.headers["x-echo"] == "secret")
            #expect(response.headers["set-cookie"] == "a=1, b=2")
            #expect(response.header("ETag") == "\"v1\"")
            #expect(response.headers.keys.allSatisfy { $0 == $0.lowercased() })
            let seen = try #require(server.requests.first)
            #expect(seen.header("if-none-match") == "\"v0\"")
            #expect(seen.method == "GET")
        }
    }

    @Test func aBodyIsSentByteForByteWithAnyMethod() async throws {
        try await withServer({ request in
            .respond(status: 200, body: Array(request.method.utf8) + [0x3A] + request.body)
        }) { http, server in
            let binary: [UInt8] = [0, 0xFF, 0xC3, 0x28, 10, 13]
            let response = try await http.fetch(HTTPRequestSpec(method: "put", url: server.baseURL + "/upload", body: binary))
            #expect(response.body == Array("PUT:".utf8) + binary)
            #expect(server.requests.first?.header("content-length") == "6")
        }
    }

    @Test func redirectsAreFollowedToTheEnd() async throws {
        try await withServer({ request in
            // /hop/N redirects to /hop/N-1; /hop/0 answers.
            let left = Int(request.uri.split(separator: "/").last ?? "") ?? 0
            if left == 0 { return .respond(status: 200, body: Array("arrived".utf8)) }
            return .respond(status: left % 2 == 0 ? 302 : 301, headers: [("Location", "/hop/\(left - 1)")])
        }) { http, server in
            let response = try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/hop/5"))
            #expect(response.status == 200)
            #expect(response.body == Array("arrived".utf8))
            #expect(response.url == server.baseURL + "/hop/0")
            #expect(server.requests.map(\.uri) == (0...5).reversed().map { "/hop/\($0)" })

            let tooMany = await failure { try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/hop/11")) }
            #expect(tooMany?.code == .network)
            #expect(tooMany?.message == "\(server.baseURL)/hop/11 redirects more than 10 times")
        }
    }

    @Test func aRedirectLoopFailsAtOnce() async throws {
        try await withServer({ request in
            .respond(status: 302, headers: [("Location", request.uri == "/a" ? "/b" : "/a")])
        }) { http, server in
            let error = await failure { try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/a")) }
            #expect(error?.code == .network)
            #expect(error?.message.contains("loop") == true, "\(String(describing: error))")
            #expect(server.requests.count == 2)
        }
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        try await withServer({ _ in .silence }) { http, server in
            let error = await failure { try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/slow", timeout: 0.3)) }
            #expect(error?.code == .timeout)
            #expect(error?.message == "\(server.baseURL)/slow did not answer within 0.3 s")
        }
    }

    @Test func theServiceTimeoutComesFromTheConfigAndRunsOnTheClock() async throws {
        let clock = ManualClock()
        let http = try HTTPService(config: ["timeout": 30], environment: [:], clock: clock)
        try await withServer(http: http, { _ in .silence }) { http, server in
            let fetch = Task { await failure { try await http.fetch(HTTPRequestSpec(url: server.baseURL)) } }
            #expect(await eventually { clock.pendingCount == 1 }, "the request's timeout waits on the clock")
            #expect(clock.nextDue == .seconds(30))
            clock.advance(by: .seconds(29))
            #expect(clock.pendingCount == 1, "still waiting")
            clock.advance(by: .seconds(1))
            let error = await fetch.value
            #expect(error?.code == .timeout)
            #expect(error?.message.hasSuffix("within 30 s") == true)
        }
    }

    @Test func aBodyOverMaxBytesFailsWithIO() async throws {
        let big = [UInt8](repeating: 0x61, count: 2 << 20)
        try await withServer({ request in
            .respond(status: 200, body: big, chunked: request.uri == "/chunked")
        }) { http, server in
            // Announced by Content-Length: refused from the head.
            let announced = await failure { try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/sized", maxBytes: 1000)) }
            #expect(announced?.code == .io)
            #expect(announced?.message.hasSuffix("is larger than 1000 bytes: raise { maxBytes = n }") == true)
            // Unannounced (chunked): refused once the limit is passed, while it streams.
            let streamed = await failure { try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/chunked", maxBytes: 100_000)) }
            #expect(streamed?.code == .io)
            // Without a maxBytes of the request's, the service's setting applies.
            let limited = try HTTPService(config: ["max_bytes": 1000], environment: [:])
            let setting = await failure { try await limited.fetch(HTTPRequestSpec(url: server.baseURL + "/sized")) }
            #expect(setting?.message.hasSuffix("is larger than 1000 bytes: raise [http] max_bytes, or { maxBytes = n } for one request") == true)
            await limited.shutdown()
            // Exactly at the limit is fine.
            let whole = try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/chunked", maxBytes: big.count))
            #expect(whole.body.count == big.count)
        }
    }

    @Test func aRefusedConnectionIsANetworkError() async throws {
        let http = try HTTPService(environment: [:])
        let refusing = try RefusingPort()
        let port = refusing.port
        let error = await failure { try await http.fetch(HTTPRequestSpec(url: "http://127.0.0.1:\(port)/", timeout: 5)) }
        withExtendedLifetime(refusing) {}
        #expect(error?.code == .network)
        #expect(error?.message.contains("127.0.0.1") == true, "\(String(describing: error))")
        await http.shutdown()
    }

    @Test func cancellingTheTaskCancelsTheRequestOnTheWire() async throws {
        try await withServer({ _ in .silence }) { http, server in
            let call = Task { try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/forever", timeout: 20)) }
            #expect(await eventually { server.requests.count == 1 }, "the request reached the server")
            call.cancel()
            let error = await failure { try await call.value }
            #expect(error?.code == .cancelled)
            #expect(await eventually { server.connectionsClosed == 1 }, "the client closed its connection")
        }
    }

    @Test func malformedURLsAndOtherSchemesAreInvalidArguments() async throws {
        let http = try HTTPService(environment: [:])
        let cases: [(url: String, words: String)] = [
            ("", "the url is empty"),
            ("ftp://example.org/file", "unsupported scheme 'ftp'"),
            ("file:///etc/passwd", "unsupported scheme 'file'"),
            ("example.org/page", "has no scheme: write http://example.org/page"),
            // Newcomer report finding 13: the commonest slips are named with the URL to write.
            ("127.0.0.1:18765/x.json", "'127.0.0.1:18765/x.json' has no scheme: write http://127.0.0.1:18765/x.json or https://"),
            ("localhost:18765/x.json", "'localhost:18765/x.json' has no scheme: write http://localhost:18765/x.json or https://"),
            ("/x.json", "'/x.json' is a path, not a URL: write the whole URL, http://HOST/x.json"),
            ("htp://example.org/", "unsupported scheme 'htp': only http and https URLs can be fetched (did you mean http?)"),
            ("mailto:someone@example.org", "unsupported scheme 'mailto': only http and https URLs can be fetched"),
            ("http://", "has no host"),
            ("http://exa mple.org/", "is not a valid URL"),
            ("http://127.0.0.1:99999/", "has the port 99999, outside 1 to 65535"),
            ("http://127.0.0.1:0/", "has the port 0, outside 1 to 65535"),
        ]
        for (url, words) in cases {
            let error = await failure { try await http.fetch(HTTPRequestSpec(url: url)) }
            #expect(error?.code == .invalidArgument, "\(url)")
            #expect(error?.message.contains(words) == true, "\(url): \(String(describing: error))")
        }
        let badMethod = await failure { try await http.fetch(HTTPRequestSpec(method: "GET /x", url: "http://127.0.0.1/")) }
        #expect(badMethod?.message.contains("is not an HTTP method") == true)
        let injected = await failure { try await http.fetch(HTTPRequestSpec(url: "http://127.0.0.1/", headers: [("X", "a\r\nB: c")])) }
        #expect(injected?.message == "header 'X' has a line break in its value: header values are one line of text")
        await http.shutdown()
        let closed = await failure { try await http.fetch(HTTPRequestSpec(url: "http://127.0.0.1/")) }
        #expect(closed?.code == .unavailable)
    }

    @Test func httpsIsSpokenWithTLS() async throws {
        // A plain-HTTP server cannot complete a TLS handshake: the client really attempts one.
        try await withServer({ _ in .respond(status: 200) }) { http, server in
            let error = await failure { try await http.fetch(HTTPRequestSpec(url: "https://127.0.0.1:\(server.port)/", timeout: 5)) }
            #expect(error?.code == .network || error?.code == .timeout, "\(String(describing: error))")
            #expect(server.requests.isEmpty)
        }
    }

    @Test func repeatedHeadersAreJoinedUnderLowerCaseNames() async throws {
        let sent = [("X-Tag", "a"), ("Content-Type", "text/plain"), ("x-tag", ""), ("X-TAG", "c")]
        try await withServer({ _ in .respond(status: 200, headers: sent, body: []) }) { http, server in
            let response = try await http.fetch(HTTPRequestSpec(url: server.baseURL))
            #expect(response.headers["x-tag"] == "a, , c")
            #expect(response.header("Content-Type") == "text/plain")
        }
        #expect(HTTPResponse.joinedHeaders([(name: "A", value: ""), (name: "a", value: "b")]) == ["a": ", b"])
    }

    @Test func clientsMakeNoTracingSpans() throws {
        // The no-op tracer a client takes by default still costs a span per request.
        let http = try HTTPService(environment: [:])
        #expect(http.configuration(proxy: nil).tracing.tracer == nil)
    }

    // MARK: Helpers

    /// Runs `body` with a fresh service (no proxy) and a server answering with `answer`, then
    /// shuts both down.
    private func withServer(http: HTTPService? = nil, _ answer: @escaping @Sendable (HTTPTestServer.Request) -> HTTPTestServer.Answer,
                            _ body: (HTTPService, HTTPTestServer) async throws -> Void) async throws {
        let server = try await HTTPTestServer.start(answer: answer)
        let http = try http ?? HTTPService(environment: [:])
        do {
            try await body(http, server)
        } catch {
            await http.shutdown()
            await server.stop()
            throw error
        }
        await http.shutdown()
        await server.stop()
    }
}

/// The service error `body` throws, or nil (recorded as an issue) when it succeeds or throws
/// anything else.
func failure<T>(_ body: () async throws -> T) async -> ServiceError? {
    do {
        let value = try await body()
        Issue.record("expected an error, got \(value)")
        return nil
    } catch let error as ServiceError {
        return error
    } catch {
        Issue.record("expected a service error, got \(error)")
        return nil
    }
}

/// Polls `condition` every 10 ms for up to `timeLimit` seconds (5 by default).
func eventually(timeLimit: Int = 5, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<(timeLimit * 100) {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
