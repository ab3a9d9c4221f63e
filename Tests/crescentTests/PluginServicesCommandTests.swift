import Foundation
import Testing

/// `crescent services NAME` for a plugin's service fails (status 1) when the plugin cannot start.
@Suite struct PluginServicesCommandTests {
    @Test func servicesNameExitsOneWhenThePluginCannotStart() async throws {
        let sandbox = try luaPluginSandbox("broke", main: "error('main fails on purpose')")
        let result = try await crescent(["--data-dir", ":memory:", "services", "broke"], in: sandbox, timeLimit: 30)
        #expect(result.status == 1, "\(result)")
        #expect((result.stdout + result.stderr).contains("main fails on purpose"), "\(result)")
    }
}
