import Foundation
import Testing

/// A Lua plugin's property named like the service object's own API (`name`, `set`) would read
/// as that API inside the plugin: the declaration is refused, naming the clash.
@Suite struct PluginPropertyNameTests {
    @Test func aPropertyNamedLikeTheServiceAPIIsRefused() async throws {
        for clash in ["name", "set"] {
            let sandbox = try Sandbox()
            _ = try sandbox.write("plugins/sh/plugin.toml", """
                name = "sh"
                version = "1.0.0"
                crescent = ">=0.1.0"
                kind = "lua"
                services = ["sh"]
                """)
            _ = try sandbox.write("plugins/sh/main.lua", """
                local s = service("sh", "Shadowed.")
                s:property("\(clash)", "string", "A property.", "x")
                """)
            let result = try await crescent(["--data-dir", ":memory:", "-e", "print(pcall(function() return services.sh end))"],
                                            in: sandbox, timeLimit: 30)
            #expect(result.stdout.contains("property '\(clash)' of service 'sh' clashes with the service object's own '\(clash)'"), "\(result)")
        }
    }
}
