import Foundation
import HTTPTestServer
import Testing

/// A process that cannot start another thread (its address space full under `ulimit -v`) when
/// the network services start for the first time gets `io` at the call and goes on; NIO would
/// trap ("Unable to create thread: 11", SIGILL) and lose the output printed before (harden4 H0).
@Suite struct ThreadLimitTests {
    /// Fills the address space with strings it keeps (16 MiB pieces, then 1 MiB, then 64 KiB,
    /// each until Lua's allocator fails), so no thread stack can be mapped while small
    /// allocations still find room, then makes the first HTTP call, then lets the strings go.
    static let fill = #"""
        local kept = {}
        for _, size in ipairs({ 16 * 1024 * 1024, 1024 * 1024, 64 * 1024 }) do
          local piece = {}
          kept[#kept + 1] = piece
          pcall(function() for i = 1, 1e9 do piece[i] = string.rep("x", size - 16) .. i end end)
        end
        print("filled")

        """#

    /// The address space a run gets (`prlimit --as`) for ``fill``: room to start, none left after.
    static let addressSpace = "--as=450000000"

    static let script = fill + #"""
        local base = app.args[1]
        services.http:get(base .. "/", function(response, err)
          local code, named = err and err.code, err and err.message:find("ulimit -v", 1, true) ~= nil
          kept = nil
          collectgarbage()
          collectgarbage()
          print("http", code, named, response and response.status)
        end)
        """#

    @Test func theFirstNetworkCallWithNoRoomForThreadsIsAnErrorAndTheRunGoesOn() async throws {
        let server = try await HTTPTestServer.start { _ in .respond(status: 200, body: Array("ok".utf8)) }
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", Self.script)
        let unset: String? = nil
        let result = try await crescent(
            [Self.addressSpace, CrescentProcess.binaryPath, "--data-dir", ":memory:", "script.lua", server.baseURL],
            executable: "/usr/bin/prlimit", in: sandbox, environment: ["http_proxy": unset, "HTTP_PROXY": unset])
        await server.stop()
        #expect(!result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
        #expect(result.status == 0, "\(result)")
        // The line printed before the call is kept too (a trap lost it).
        #expect(result.stdoutLines == ["filled", "http\tio\ttrue\tnil"], "\(result)")
    }
}
