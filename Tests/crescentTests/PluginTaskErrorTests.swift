import Foundation
import Testing

/// An error in a Lua plugin's own task (a memory error above all) names the plugin.
@Suite struct PluginTaskErrorTests {
    @Test func aMemoryErrorInAPluginTaskNamesThePlugin() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("crescent.toml", "[plugins]\nmemory_limit = 32\n")
        _ = try sandbox.write("plugins/hog/plugin.toml", """
            name = "hog"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["hog"]
            """)
        _ = try sandbox.write("plugins/hog/main.lua", """
            local s = service("hog", "Eats memory.")
            task(function() local t = {} for i = 1, 1e9 do t[i] = ("x"):rep(64) .. i end end)
            """)
        let result = try await crescent(["--data-dir", ":memory:", "-e", "local h = services.hog sleep(0.5)"], in: sandbox, timeLimit: 30)
        #expect(result.stderr.contains("error in task: plugin 'hog': plugins/hog/main.lua:2: not enough memory: the memory limit of 32 MiB "
                                       + "was reached (raise it with [plugins] memory_limit in crescent.toml)"), "\(result)")
    }
}
