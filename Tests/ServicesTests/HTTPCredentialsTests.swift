import Foundation
import HTTPTestServer
import Model
@testable import Services
import Testing

/// A URL's user information (`http://user:password@host/`) is sent as Basic authentication and
/// never repeated: not in errors, not in a response's `url`.
@Suite struct HTTPCredentialsTests {
    @Test func userInformationIsSentAsBasicAuthentication() async throws {
        let server = try await HTTPTestServer.start { request in
            .respond(status: 200, body: Array((request.header("authorization") ?? "none").utf8))
        }
        let http = try HTTPService(environment: [:])
        let port = server.port
        let response = try await http.fetch(HTTPRequestSpec(url: "http://ann:p%40ss@127.0.0.1:\(port)/x"))
        #expect(String(decoding: response.body, as: UTF8.self) == "Basic " + Data("ann:p@ss".utf8).base64EncodedString())
        #expect(response.url == "http://***@127.0.0.1:\(port)/x")
        // A header the caller sets wins over the URL's.
        let own = try await http.fetch(HTTPRequestSpec(url: "http://ann:pw@127.0.0.1:\(port)/", headers: [("Authorization", "Bearer t")]))
        #expect(String(decoding: own.body, as: UTF8.self) == "Bearer t")
        await http.shutdown()
        await server.stop()
    }

    @Test func noErrorRepeatsThePassword() async throws {
        let http = try HTTPService(environment: [:])
        let urls = [
            "http://ann:hunter2@127.0.0.1:1/",              // refused
            "http://ann:hunter2@127.0.0.1:70000/",          // port out of range
            "http://ann:hunter2@127.0.0.1/a b",             // not a URL
            "http://ann:hunter2@/path",                      // no host
        ]
        for url in urls {
            let error = await failure { try await http.fetch(HTTPRequestSpec(url: url, timeout: 5)) }
            let message = error?.message ?? ""
            #expect(!message.contains("hunter2") && !message.contains("ann"), "\(url): \(message)")
            #expect(message.contains("***@"), "\(url): \(message)")
        }
        await http.shutdown()
    }

    @Test func feedErrorsDoNotRepeatThePassword() {
        let status = FeedsService.statusError(404, url: "http://ann:hunter2@127.0.0.1/feed")
        #expect(status.message == "HTTP 404 from http://***@127.0.0.1/feed")
        let refused = #expect(throws: ServiceError.self) { try FeedsService.checkURL("ftp://ann:hunter2@host/feed") }
        #expect(refused?.message.contains("hunter2") == false, "\(String(describing: refused))")
    }

    @Test func redactionRemovesOnlyTheAuthoritysUserInformation() {
        #expect(HTTPTarget.redacted("https://u:p@h:8/a@b?c@d") == "https://***@h:8/a@b?c@d")
        #expect(HTTPTarget.redacted("http://a@b@host/") == "http://***@host/")
        #expect(HTTPTarget.redacted("http://host/a@b") == "http://host/a@b")
        #expect(HTTPTarget.redacted("not a url") == "not a url")
    }
}
