import HTTPTestServer
import Model
@testable import Services
import Testing

/// A URL's percent escapes go out as written when the URL also holds characters that must be
/// encoded (a raw space): before, Foundation encoded every `%` then too (`%2f` went out as `%252f`).
@Suite struct HTTPPercentEscapeTests {
    @Test func escapesAreKeptWhenARawSpaceIsEncoded() async throws {
        let server = try await HTTPTestServer.start { _ in .respond(status: 200) }
        let http = try HTTPService(environment: [:])
        let cases: [(String, String)] = [
            ("/a%2fb x", "/a%2fb%20x"),
            ("/%0d%0aX: y", "/%0d%0aX:%20y"),
            ("/100% sure", "/100%25%20sure"),
            ("/q?a=1%202 b", "/q?a=1%202%20b"),
            ("/plain%2F", "/plain%2F"),
        ]
        for (path, _) in cases { _ = try? await http.fetch(HTTPRequestSpec(url: server.baseURL + path)) }
        await http.shutdown()
        await server.stop()
        #expect(server.requests.map(\.uri) == cases.map(\.1))
    }
}
