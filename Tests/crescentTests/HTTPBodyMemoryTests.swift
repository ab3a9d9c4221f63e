import Foundation
import HTTPTestServer
import Testing

/// A large body costs the host about twice its size at its peak (the body collected, then the
/// script's string): 2.1 times with a Content-Length, 2.5 without (the smaller arrays it grew
/// through stay with the allocator). Before, 3.6 and 3.5. The script measures its own peak resident
/// memory (`VmHWM`, reset through `/proc/self/clear_refs`) around each request.
@Suite struct HTTPBodyMemoryTests {
    static let size = 64 << 20

    static let script = #"""
        local function status(field)
          for line in io.lines("/proc/self/status") do
            local kb = line:match("^" .. field .. ":%s+(%d+)")
            if kb then return tonumber(kb) * 1024 end
          end
        end
        local base, size = app.args[1], math.tointeger(app.args[2])
        task(function()
          for _, path in ipairs({ "/sized", "/chunked" }) do
            collectgarbage()
            collectgarbage()
            local reset = assert(io.open("/proc/self/clear_refs", "w"))
            reset:write("5")
            reset:close()
            local before = status("VmRSS")
            local response, err = services.http:get(base .. path, { maxBytes = size })
            assert(not err, tostring(err))
            assert(#response.body == size)
            print(path, string.format("%.2f", (status("VmHWM") - before) / size))
            response = nil
          end
        end)
        """#

    @Test func aLargeBodyPeaksAtLessThanThreeTimesItsSize() async throws {
        let body = [UInt8](repeating: 0x61, count: Self.size)
        let server = try await HTTPTestServer.start(recordsRequests: false) { request in
            .respond(status: 200, body: body, chunked: request.uri == "/chunked")
        }
        let unset: String? = nil
        let result = try await runScript(Self.script, arguments: [server.baseURL, String(Self.size)],
                                         environment: ["http_proxy": unset, "HTTP_PROXY": unset], timeLimit: 60)
        await server.stop()
        #expect(result.status == 0 && !result.killedBySignal, "\(result)")
        #expect(result.stdoutLines.count == 2, "\(result)")
        for line in result.stdoutLines {
            let parts = line.split(separator: "\t")
            let growth = parts.count == 2 ? Double(parts[1]) : nil
            #expect(growth.map { $0 < 2.8 } == true, "peak growth per byte of body: \(line)")
        }
    }
}
