import Foundation
import HTTPTestServer
import Testing

/// `services.http` from a script run by the real `crescent` binary, against a server the test
/// starts on 127.0.0.1: a completion, calls awaited inside a task, errors as values, argument
/// errors at the call site, cancellation, binary bodies and `response:json()`.
@Suite struct HTTPScriptTests {
    static let script = #"""
        local http, base = services.http, app.args[1]
        http:get(base .. "/data.json", { headers = { ["X-Token"] = "t1" } }, function(response, err)
          assert(not err, tostring(err))
          print("completion", response.status, response.headers["content-type"], response.body)
          local data = response:json()
          print("json", data.name, data.count, math.type(data.count))
          print("read-only", select(2, pcall(function() response.status = 1 end)))
          task(function()
            local missing, err = http:request({ url = base .. "/missing", method = "POST", body = "payload" })
            print("awaited", missing.status, missing.body, err)
            local _, rejected = http:get("ftp://example.org/file")
            print("rejected", rejected.code, tostring(rejected))
            local _, late = http:get(base .. "/silent", { timeout = 0.2 })
            print("timeout", late.code)
            local request = http:get(base .. "/silent", function(_, cancelled) print("cancelled", cancelled.code) end)
            request:cancel()
            local binary = http:get(base .. "/binary")
            print("binary", #binary.body, binary.body == "\0\255\1")
            print("not json", select(2, pcall(function() local data = binary:json() return data end)))
            print("bad argument", select(2, pcall(function() return http:get(42) end)))
          end)
        end)
        """#

    @Test func aScriptFetchesWithCompletionsAndAwaits() async throws {
        let server = try await HTTPTestServer.start { request in
            switch request.uri {
            case "/data.json":
                .respond(status: 200, headers: [("Content-Type", "application/json")],
                         body: Array(#"{"name":"crescent","count":3}"#.utf8))
            case "/missing": .respond(status: 404, body: Array("no \(request.method) \(String(decoding: request.body, as: UTF8.self))".utf8))
            case "/binary": .respond(status: 200, body: [0, 255, 1])
            default: .silence
            }
        }
        let unset: String? = nil
        let result = try await runScript(Self.script, arguments: [server.baseURL], environment: [
            "http_proxy": unset, "HTTP_PROXY": unset, "https_proxy": unset, "HTTPS_PROXY": unset,
        ])
        await server.stop()
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
        #expect(result.stdoutLines == [
            "completion\t200\tapplication/json\t{\"name\":\"crescent\",\"count\":3}",
            "json\tcrescent\t3\tinteger",
            "read-only\tscript.lua:7: cannot set 'response.status': a response is read-only (it is a snapshot made by its service)",
            "awaited\t404\tno POST payload\tnil",
            "rejected\tinvalid_argument\thttp.get: invalid_argument: 'ftp://example.org/file' has the unsupported scheme 'ftp': only http and https URLs can be fetched",
            "timeout\ttimeout",
            "cancelled\tcancelled",
            "binary\t3\ttrue",
            "not json\tscript.lua:19: response:json(): the body is not JSON: unexpected byte 0x0 at line 1, column 1 (byte 0) (expected a value)",
            "bad argument\tscript.lua:20: http:get(url[, options], completion): argument #1 must be a string, got number",
        ], "\(result)")
        #expect(server.requests.first?.header("x-token") == "t1")
    }

    /// Requests still in flight when the script exits are answered (cancelled) after the host has
    /// finished, while its loop shuts down: the answers are dropped quietly, never scheduled on
    /// the shut-down loop (which NIO reports, and is to make a crash). Five runs, 20 requests each.
    @Test func requestsInFlightAtExitEndQuietly() async throws {
        let server = try await HTTPTestServer.start { _ in .silence }
        defer { Task { await server.stop() } }
        let script = """
            for i = 1, 20 do services.http:get(app.args[1] .. "/slow/" .. i, function() end) end
            timer.after(0.05, function() app.exit(0) end)
            """
        for _ in 0..<5 {
            let result = try await runScript(script, arguments: [server.baseURL])
            #expect(result.status == 0, "\(result)")
            #expect(result.stderr.isEmpty, "\(result)")
        }
    }
}
