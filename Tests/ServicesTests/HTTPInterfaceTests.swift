import HTTPTestServer
import Model
@testable import Services
import Testing

/// `get` and `request` as the binding calls them: options tables checked and named, results as
/// `response` data models whose body keeps its bytes.
@Suite struct HTTPInterfaceTests {
    @Test func getAndRequestAnswerResponseModels() async throws {
        let server = try await HTTPTestServer.start { request in
            .respond(status: 201, headers: [("Content-Type", "application/octet-stream")], body: [0xFF, 0x00] + request.body)
        }
        let http = try HTTPService(environment: [:])
        let got = try await invokeMethod(http, "get", [.string(server.baseURL + "/x"), ["headers": ["Accept": ["a/b", "c/d"]]]])
        guard case .model(let response) = got else {
            Issue.record("not a data model: \(got)")
            return
        }
        #expect(response.typeName == "response")
        #expect(response["status"] == 201)
        #expect(response["body"] == .bytes([0xFF, 0x00]))
        #expect(response["headers"]["content-type"] == "application/octet-stream")
        #expect(server.requests.first?.headers.filter { $0.name == "Accept" }.map(\.value) == ["a/b", "c/d"])

        let posted = try await invokeMethod(http, "request", [["url": .string(server.baseURL), "method": "POST", "body": .bytes([1, 2, 0xFE]),
                                                       "headers": ["X-Count": 3], "timeout": 5, "maxBytes": 100]])
        #expect(posted["body"] == .bytes([0xFF, 0x00, 1, 2, 0xFE]))
        #expect(server.requests.last?.method == "POST")
        #expect(server.requests.last?.header("x-count") == "3")
        await http.shutdown()
        await server.stop()
    }

    @Test func badOptionsAreNamed() async throws {
        let http = try HTTPService(environment: [:])
        let url = Value.string("http://127.0.0.1:1/")
        let cases: [(method: String, arguments: [Value], message: String)] = [
            ("get", [url, ["max_bytes": 10]], "unknown option 'max_bytes' (options: headers, maxBytes, timeout; did you mean 'maxBytes'?)"),
            ("get", [url, ["timeout": 0]], "timeout must be a number of seconds above 0, got 0"),
            ("get", [url, ["maxBytes": -1]], "maxBytes must be an integer number of bytes in [0, 4294967295], got -1"),
            ("get", [url, ["maxBytes": 1.5]], "maxBytes must be an integer number of bytes in [0, 4294967295], got 1.5"),
            ("get", [url, ["headers": "Accept: */*"]], "headers must be a table of name = value, got string"),
            ("get", [url, ["headers": ["Accept": true]]], "header 'Accept' must be a string, got boolean"),
            ("request", [["url": url, "method": 1]], "method must be a string such as \"POST\", got number"),
            ("request", [["url": url, "body": ["a": 1]]], "body must be a string, got table (json.encode(t) makes one from a table)"),
            ("request", [["url": "mailto:someone@example.org"]], "'mailto:someone@example.org' has the unsupported scheme 'mailto': only http and https URLs can be fetched"),
        ]
        for (method, arguments, message) in cases {
            let error = await failure { try await invokeMethod(http, method, arguments) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == message)
        }
        await http.shutdown()
    }

    @Test func settingsAreChecked() throws {
        #expect(throws: ServiceError(.invalidArgument, "[http] timeout must be a number of seconds above 0, got \"soon\"")) {
            try HTTPService(config: ["timeout": "soon"], environment: [:])
        }
        #expect(throws: ServiceError(.invalidArgument, "[http] connections_per_host must be an integer in [1, 1000], got 0")) {
            try HTTPService(config: ["connections_per_host": 0], environment: [:])
        }
        let http = try HTTPService(config: ["timeout": 5, "max_bytes": 1024, "connections_per_host": 4], environment: [:])
        #expect(http.settings.timeout == 5 && http.settings.maxBytes == 1024 && http.settings.connectionsPerHost == 4)
    }
}
