import Foundation
import Testing

/// Empty tables and `json` values cross a Lua plugin's services both ways, as the builtin
/// store takes them: json.array/json.object's marks are the data's shape, not behaviour.
@Suite struct PluginValueCrossingTests {
    @Test func emptyTablesAndJSONValuesCrossBothWays() async throws {
        let sandbox = try Sandbox()
        _ = try sandbox.write("plugins/ec/plugin.toml", """
            name = "ec"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["ec"]
            """)
        _ = try sandbox.write("plugins/ec/main.lua", """
            local s = service("ec", "Echo.")
            s:method("echo", { "a: value" }, "value", "Echoes.", function(a) return a end)
            s:method("marks", {}, "value", "Marked values.", function()
              return { json.array({}), json.object({}), json.decode('{"a":[]}') }
            end)
            """)
        let result = try await crescent(["--data-dir", ":memory:", "-e", """
            task(function()
              local e = services.ec
              for _, v in ipairs({ {}, { a = {} }, json.array({}), json.decode('{"x":[]}') }) do
                local ok, got = pcall(function() return e:echo(v) end)
                print(ok and json.encode(got) or tostring(got))
              end
              print(json.encode(e:marks()))
            end)
            """], in: sandbox, timeLimit: 30)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutLines == ["[]", #"{"a":[]}"#, "[]", #"{"x":[]}"#, #"[[],{},{"a":[]}]"#], "\(result)")
    }
}
