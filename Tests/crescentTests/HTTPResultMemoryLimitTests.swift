import Foundation
import HTTPTestServer
import Testing

/// A result bigger than the Lua memory limit arrives as an ordinary error through the completion
/// and the await's return, and the script carries on. Before, the memory error was raised at
/// the await (or before the completion ran) while Lua still held the body, so the script's own
/// `pcall` handler ran out of memory too and the task died; the completion never ran.
@Suite struct HTTPResultMemoryLimitTests {
    static let size = 24 << 20

    static let script = #"""
        local url = app.args[1]
        task(function()
          local ok, response, err = pcall(function() return services.http:get(url, { maxBytes = 64 << 20 }) end)
          print("await", ok, response == nil, err and err.code, err and err.message)
          services.http:get(url, { maxBytes = 64 << 20 }, function(r, e)
            print("callback", r == nil, e and e.code, e and e.message)
            services.http:get(url .. "small", function(small) print("after", small and small.body) end)
          end)
        end)
        """#

    @Test func aBodyPastTheMemoryLimitIsAnErrorTheScriptHandles() async throws {
        let body = [UInt8](repeating: 0x61, count: Self.size)
        let server = try await HTTPTestServer.start(recordsRequests: false) { request in
            request.uri.hasSuffix("small") ? .respond(status: 200, body: Array("ok".utf8)) : .respond(status: 200, body: body)
        }
        let unset: String? = nil
        let result = try await runScript(Self.script, options: ["--memory-limit", "16"], arguments: [server.baseURL + "/big"],
                                         environment: ["http_proxy": unset, "HTTP_PROXY": unset], timeLimit: 60)
        await server.stop()
        #expect(result.status == 0 && !result.killedBySignal, "\(result)")
        let message = "the result of http.get did not fit in the Lua memory limit of 16 MiB: raise it with --memory-limit, or ask for less in one call (a smaller maxBytes, where the method takes one)"
        #expect(result.stdoutLines == [
            "await\ttrue\ttrue\tio\t\(message)",
            "callback\ttrue\tio\t\(message)",
            "after\tok",
        ], "\(result)")
    }
}
