import AsyncHTTPClient
import HTTPTestServer
import Model
@testable import Services
import Testing

/// `http_proxy`, `https_proxy` and `no_proxy`, with a test server standing in for the proxy: it
/// sees absolute-form request targets and CONNECT requests.
@Suite struct HTTPProxyTests {
    @Test func plainHTTPGoesThroughTheProxyWithItsCredentials() async throws {
        // AsyncHTTPClient tunnels plain HTTP through the proxy with CONNECT too; this proxy refuses.
        let proxy = try await HTTPTestServer.start { _ in .respond(status: 407) }
        let http = try HTTPService(environment: ["http_proxy": "http://reader:p%40ss@127.0.0.1:\(proxy.port)"])
        let error = await failure { try await http.fetch(HTTPRequestSpec(url: "http://feeds.example.invalid/news.xml", timeout: 5)) }
        #expect(error?.code == .network, "\(String(describing: error))")
        #expect(proxy.requests.map(\.method) == ["CONNECT"])
        #expect(proxy.requests.first?.uri == "feeds.example.invalid:80")
        // base64("reader:p@ss")
        #expect(proxy.requests.first?.header("proxy-authorization") == "Basic cmVhZGVyOnBAc3M=")
        await http.shutdown()
        await proxy.stop()
    }

    @Test func noProxyHostsAreReachedDirectly() async throws {
        let proxy = try await HTTPTestServer.start { _ in .respond(status: 403) }
        let direct = try await HTTPTestServer.start { request in .respond(status: 200, body: Array(request.uri.utf8)) }
        let http = try HTTPService(environment: ["HTTP_PROXY": "127.0.0.1:\(proxy.port)", "no_proxy": "example.org, .127.0.0.1"])
        let response = try await http.fetch(HTTPRequestSpec(url: "\(direct.baseURL)/direct"))
        #expect(response.status == 200)
        #expect(response.body == Array("/direct".utf8))
        #expect(proxy.requests.isEmpty)
        // Any other host still goes through the proxy.
        let proxied = await failure { try await http.fetch(HTTPRequestSpec(url: "http://elsewhere.invalid/", timeout: 5)) }
        #expect(proxied?.code == .network)
        #expect(proxy.requests.map(\.uri) == ["elsewhere.invalid:80"])
        await http.shutdown()
        await proxy.stop()
        await direct.stop()
    }

    @Test func httpsIsTunnelledThroughHTTPSProxy() async throws {
        let proxy = try await HTTPTestServer.start { _ in .respond(status: 403) }
        let http = try HTTPService(environment: ["https_proxy": "127.0.0.1:\(proxy.port)"])
        let error = await failure { try await http.fetch(HTTPRequestSpec(url: "https://secure.example.invalid/", timeout: 5)) }
        #expect(error?.code == .network, "the proxy refused the tunnel: \(String(describing: error))")
        #expect(proxy.requests.first?.method == "CONNECT")
        #expect(proxy.requests.first?.uri == "secure.example.invalid:443")
        await http.shutdown()
        await proxy.stop()
    }

    @Test func aMalformedProxyFailsOnlyTheRequestsThatUseIt() async throws {
        let server = try await HTTPTestServer.start { _ in .respond(status: 204) }
        let http = try HTTPService(environment: ["http_proxy": "ftp://proxy.example:21", "no_proxy": "localhost"])
        let error = await failure { try await http.fetch(HTTPRequestSpec(url: "http://elsewhere.invalid/")) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.hasPrefix("http_proxy='ftp://proxy.example:21' has the unsupported scheme 'ftp'") == true,
                "\(String(describing: error))")
        let direct = try await http.fetch(HTTPRequestSpec(url: "http://localhost:\(server.port)/"))
        #expect(direct.status == 204)
        await http.shutdown()
        await server.stop()
    }

    @Test func noProxyEntriesMatchHostsDomainsAndPorts() throws {
        let proxies = ProxyEnvironment(environment: ["http_proxy": "proxy:3128", "https_proxy": "socks5://socks",
                                                     "no_proxy": " .internal.example ,db:5432,[::1]"])
        func routed(_ scheme: String, _ host: String, _ port: Int) throws -> String {
            guard let proxy = try proxies.proxy(scheme: scheme, host: host, port: port) else { return "direct" }
            return "\(proxy.host):\(proxy.port)"
        }
        #expect(try routed("http", "internal.example", 80) == "direct")
        #expect(try routed("http", "api.internal.example", 80) == "direct")
        #expect(try routed("http", "notinternal.example", 80) == "proxy:3128")
        #expect(try routed("http", "db", 5432) == "direct")
        #expect(try routed("http", "db", 80) == "proxy:3128")
        #expect(try routed("http", "[::1]", 80) == "direct")
        #expect(try routed("https", "example.org", 443) == "socks:1080")
        #expect(try routed("https", "API.Internal.Example", 443) == "direct")

        let everything = ProxyEnvironment(environment: ["https_proxy": "proxy:8080", "NO_PROXY": "*"])
        #expect(try everything.proxy(scheme: "https", host: "example.org", port: 443) == nil)
        #expect(try ProxyEnvironment(environment: [:]).proxy(scheme: "http", host: "example.org", port: 80) == nil)
    }
}
