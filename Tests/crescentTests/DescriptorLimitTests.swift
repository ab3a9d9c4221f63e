import Foundation
import HTTPTestServer
import Testing

/// A process at its file-descriptor limit when a network service starts for the first time gets
/// an error at the call and goes on; the services start once descriptors are free again. The
/// binary runs under `prlimit --nofile=48` and holds every descriptor it can open. The store
/// likewise: its open fails naming the cause, and the next call opens it.
@Suite struct DescriptorLimitTests {
    static let script = #"""
        local base, files = app.args[1], {}
        for _ = 1, 100 do
          local file = io.open("script.lua")
          if not file then break end
          files[#files + 1] = file
        end
        print("exhausted", #files < 100)
        services.session:register("ann", "correct horse", function(_, registerErr)
          print("register", registerErr and registerErr.code, registerErr and registerErr.message:find("too many open files (EMFILE)", 1, true) ~= nil)
        services.http:get(base .. "/", function(_, err)
          print("http", err and err.code, err and err.message:find("ulimit", 1, true) ~= nil)
          services.feeds:add(base .. "/feed", function(_, feedErr)
            print("feeds", feedErr and feedErr.code)
            for _, file in ipairs(files) do file:close() end
            services.http:get(base .. "/", function(response, later)
              print("freed", response and response.status, later)
              services.session:register("ann", "correct horse", function(name, again)
                print("register again", name, again)
              end)
            end)
          end)
        end)
        end)
        """#

    @Test func theFirstNetworkCallOutOfDescriptorsIsAnErrorAndTheRunGoesOn() async throws {
        let server = try await HTTPTestServer.start { _ in .respond(status: 200, body: Array("ok".utf8)) }
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", Self.script)
        let unset: String? = nil
        let result = try await crescent(
            ["--nofile=48", CrescentProcess.binaryPath, "--data-dir", "data", "script.lua", server.baseURL], executable: "/usr/bin/prlimit",
            in: sandbox, environment: ["http_proxy": unset, "HTTP_PROXY": unset])
        await server.stop()
        #expect(!result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
        #expect(result.status == 0, "\(result)")
        // The store, first opened out of descriptors, says so and opens at the next call.
        #expect(result.stdoutLines == ["exhausted\ttrue", "register\tio\ttrue", "http\tio\ttrue", "feeds\tio", "freed\t200\tnil",
                                       "register again\tann\tnil"], "\(result)")
    }
}
