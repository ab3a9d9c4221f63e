import Testing

/// `require` as in `lua5.4`, plus the script's own folder: modules next to the script, `LUA_PATH`,
/// and the system Lua 5.4 modules (Debian's lua-cjson, installed by `make test`).
@Suite struct ModuleTests {
    @Test func aModuleNextToTheScriptIsFoundFromAnotherDirectory() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app/helper.lua", "return { greet = function(n) return 'hello ' .. n end }\n")
        try sandbox.write("app/pkg/init.lua", "return { name = 'pkg' }\n")
        try sandbox.write("app/main.lua", """
            local helper = require("helper")
            print(helper.greet("world"))
            print(require("pkg").name)
            print(require("helper") == helper)
            print(package.path:match("^[^;]*;[^;]*;"), package.cpath:match("^[^;]*;"))
            """)
        let elsewhere = try sandbox.makeFolder("elsewhere")
        let result = try await crescent(["../app/main.lua"], in: sandbox, directory: elsewhere)
        #expect(result.status == 0, "\(result)")
        // The script's folder comes first on both paths, ahead of the system's.
        #expect(result.stdout == "hello world\npkg\ntrue\n../app/?.lua;../app/?/init.lua;\t../app/?.so;\n", "\(result)")
    }

    @Test func luaPathIsHonoured() async throws {
        let sandbox = try Sandbox()
        let lib = try sandbox.makeFolder("lib")
        try sandbox.write("lib/fromenv.lua", "return { value = 42 }\n")
        let result = try await crescent(
            ["-e", "print(require('fromenv').value)"], in: sandbox,
            directory: try sandbox.makeFolder("cwd"),
            environment: ["LUA_PATH": lib + "/?.lua;;"]
        )
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "42\n", "\(result)")
    }

    @Test func aMissingModuleIsAnErrorListingWhereItLooked() async throws {
        let result = try await runScript("require('no_such_module_xyz')")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.hasPrefix("crescent: script.lua:1: module 'no_such_module_xyz' not found"), "\(result)")
        #expect(result.stderr.contains("no_such_module_xyz.lua"), "\(result)")
    }

    @Test func anErrorInsideAModuleNamesTheModuleFile() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("broken.lua", "local x = 1\nerror('module failed')\n")
        try sandbox.write("script.lua", "require('broken')\n")
        let result = try await crescent(["script.lua"], in: sandbox)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("broken.lua:2: module failed"), "\(result)")
    }

    @Test func systemCjsonLoads() async throws {
        let result = try await runScript("""
            local cjson = require "cjson"
            print(cjson.encode({ 1, 2, 3 }))
            print(cjson.decode('{"a":[true]}').a[1])
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "[1,2,3]\ntrue\n", "\(result)")
    }
}
