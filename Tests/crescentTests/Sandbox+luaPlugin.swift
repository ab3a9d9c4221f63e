/// A Lua plugin in `plugins/NAME` of `sandbox` (a fresh one when nil), providing service NAME and
/// requiring `requires` (a TOML array), with `main` as its main.lua: the plugin tests' one fixture.
func luaPluginSandbox(_ name: String, main: String, requires: String = "[]", in sandbox: Sandbox? = nil) throws -> Sandbox {
    let sandbox = try sandbox ?? Sandbox()
    _ = try sandbox.write("plugins/\(name)/plugin.toml", """
        name = "\(name)"
        version = "1.0.0"
        crescent = ">=0.1.0"
        kind = "lua"
        services = ["\(name)"]
        requires = \(requires)
        """)
    _ = try sandbox.write("plugins/\(name)/main.lua", main)
    return sandbox
}
