import HTTPTestServer
import Model
@testable import Services
import Synchronization
import Testing

/// A server may close a kept-alive connection it thinks idle just as a request goes out on it,
/// without `Connection: close`. The test server answers the requests it is told to and closes the
/// connection without a byte of answer on the others (``HTTPTestServer/Answer/hangUp``).
@Suite struct HTTPKeepAliveTests {
    /// A server that answers every request but those numbered in `hangUps` (from 1).
    private func server(hangingUpOn hangUps: Set<Int>) async throws -> HTTPTestServer {
        try await countingServer { _, number in
            hangUps.contains(number) ? .hangUp : .respond(status: 200, body: Array("answer \(number)".utf8))
        }
    }

    /// A server that answers each request as `answer` says, given the request and its number
    /// (from 1).
    private func countingServer(_ answer: @escaping @Sendable (HTTPTestServer.Request, Int) -> HTTPTestServer.Answer) async throws -> HTTPTestServer {
        let count = Mutex(0)
        return try await HTTPTestServer.start { request in
            let number = count.withLock { count in
                count += 1
                return count
            }
            return answer(request, number)
        }
    }

    @Test func aGetWhoseConnectionClosesBeforeAnsweringIsSentOnceMoreOnAnother() async throws {
        let server = try await server(hangingUpOn: [2])
        let http = try HTTPService(environment: [:])
        let first = try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/a"))
        #expect(String(decoding: first.body, as: UTF8.self) == "answer 1")
        let second = try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/b", timeout: 30))
        #expect(second.status == 200 && String(decoding: second.body, as: UTF8.self) == "answer 3")
        #expect(server.requests.map(\.uri) == ["/a", "/b", "/b"])
        #expect(server.connectionsOpened == 2, "the second request went out on the kept-alive connection, the retry on a new one")
        await http.shutdown()
        await server.stop()
    }

    @Test func aPostIsNotSentAgain() async throws {
        let server = try await server(hangingUpOn: [2])
        let http = try HTTPService(environment: [:])
        _ = try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/a"))
        let error = await failure { try await http.fetch(HTTPRequestSpec(method: "POST", url: server.baseURL + "/b", body: [1], timeout: 30)) }
        #expect(error?.code == .network, "\(String(describing: error))")
        #expect(server.requests.map(\.uri) == ["/a", "/b"])
        await http.shutdown()
        await server.stop()
    }

    @Test func aGetIsSentAgainOnlyOnce() async throws {
        let server = try await server(hangingUpOn: [2, 3])
        let http = try HTTPService(environment: [:])
        _ = try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/a"))
        let error = await failure { try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/b", timeout: 30)) }
        #expect(error?.code == .network, "\(String(describing: error))")
        #expect(server.requests.map(\.uri) == ["/a", "/b", "/b"])
        await http.shutdown()
        await server.stop()
    }

    /// Each hop of a redirect goes out on the kept-alive connection and may race its close, so
    /// each gets its own retry (attack D6: the second hop failed with "Connection reset by
    /// peer", naming the first URL).
    @Test func eachRedirectHopIsSentOnceMoreOnAnother() async throws {
        let server = try await countingServer { request, number in
            // The first request of every hop finds its connection closed.
            if [2, 4, 6].contains(number) { return .hangUp }
            switch request.uri {
            case "/r/2": return .respond(status: 302, headers: [("Location", "/r/1")])
            case "/r/1": return .respond(status: 302, headers: [("Location", "/ok")])
            default: return .respond(status: 200, body: Array("answer \(number)".utf8))
            }
        }
        let http = try HTTPService(environment: [:])
        _ = try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/a"))
        let response = try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/r/2", timeout: 30))
        #expect(response.status == 200 && String(decoding: response.body, as: UTF8.self) == "answer 7")
        #expect(server.requests.map(\.uri) == ["/a", "/r/2", "/r/2", "/r/1", "/r/1", "/ok", "/ok"])
        await http.shutdown()
        await server.stop()
    }

    /// A hop that fails twice fails the request, naming the first URL and the hop.
    @Test func aHopThatFailsTwiceIsNamedInTheError() async throws {
        let server = try await countingServer { request, number in
            if number >= 3 { return .hangUp }
            return request.uri == "/from" ? .respond(status: 302, headers: [("Location", "/to")]) : .respond(status: 200)
        }
        let http = try HTTPService(environment: [:])
        _ = try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/a"))
        let error = await failure { try await http.fetch(HTTPRequestSpec(url: server.baseURL + "/from", timeout: 30)) }
        #expect(error?.code == .network, "\(String(describing: error))")
        #expect(error?.message.contains("\(server.baseURL)/from (redirected to \(server.baseURL)/to)") == true, "\(String(describing: error))")
        #expect(server.requests.map(\.uri) == ["/a", "/from", "/to", "/to"])
        await http.shutdown()
        await server.stop()
    }
}

