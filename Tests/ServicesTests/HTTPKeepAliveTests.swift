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
        let count = Mutex(0)
        return try await HTTPTestServer.start { _ in
            let number = count.withLock { count in
                count += 1
                return count
            }
            return hangUps.contains(number) ? .hangUp : .respond(status: 200, body: Array("answer \(number)".utf8))
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
}
