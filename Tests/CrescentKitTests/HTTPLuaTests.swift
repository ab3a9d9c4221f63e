import CrescentKit
import HTTPTestServer
import Model
import Services
import Testing

/// `services.http` in a host on a real loop: its requests keep the run alive, `app.exit` with one
/// in flight tears down cleanly, and the service (with its clients) is released when the host ends.
@Suite struct HTTPLuaTests {
    @Test func aRequestInFlightKeepsTheRunAliveAndExitReleasesTheService() async throws {
        let server = try await HTTPTestServer.start { request in
            request.uri == "/silent" ? .silence : .respond(status: 200, body: Array("ok".utf8))
        }
        weak var released: HTTPService?
        do {
            let plugin = HTTPPlugin(try HTTPService(environment: [:]))
            released = plugin.service
            let run = await RealLoopRun.run("""
                local http, base = services.http, "\(server.baseURL)"
                http:get(base .. "/late", function(response) print("answered", response.status, response.body)
                  http:get(base .. "/silent", function(_, err) print("never", err) end)
                  timer.after(0.1, function() app.exit(0) end)
                end)
                """, options: HostOptions(), plugins: [plugin])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.lines == ["answered\t200\tok"])
            #expect(run.stderr.isEmpty)
        }
        // The cancelled request's callback, which holds the host, completes on a client loop soon
        // after the run ends; then nothing holds the service.
        #expect(await eventually { released == nil }, "the host let go of the service, whose deinit shuts its clients down")
        #expect(await eventually { server.connectionsClosed == server.connectionsOpened },
                "the silent request's connection closed: opened \(server.connectionsOpened), closed \(server.connectionsClosed)")
        await server.stop()
    }
}

/// Hands a given http service to the host.
private struct HTTPPlugin: Plugin {
    let name = "http"
    let service: HTTPService

    init(_ service: HTTPService) { self.service = service }

    func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] { [service] }
}

/// Polls `condition` every 10 ms for up to 5 s.
private func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<500 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
