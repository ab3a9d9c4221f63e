@testable import CrescentKit
import LuaBridge
import Testing

/// The prelude's embedded bytecode: what a host loads instead of compiling the sources.
struct PreludeTests {
    /// The build's bytecode (the PreludeCompiler plugin) is what a host loads: the Lua the binary
    /// links accepts every module's (no host falls back to compiling the source), each under the
    /// module's chunk name with its debug information, so errors still name `[crescent NAME]:LINE`;
    /// and it is the module's current source, compiled by the build, with no step to forget.
    @Test func theBuildCompilesEachModuleForTheLinkedLua() throws {
        #expect(Prelude.allModules.count == Set(Prelude.allModules.map(\.name)).count)
        for module in Prelude.allModules {
            let vm = try LuaVM()
            try vm.load(module.compiled, name: "=wrong", mode: "b")
            #expect(vm.dumpFunction() == module.compiled, "\(module.name)")
            let source = try LuaVM()
            try source.load(module.source, name: module.chunkName)
            #expect(source.dumpFunction() == module.compiled, "\(module.name): the built bytecode is not its source's")
            // The chunk name and line information are inside the bytecode, whatever the load names.
            let probe = try LuaVM()
            try probe.load(Array("local chunk = ...; local info = debug.getinfo(chunk, 'S'); return info.source .. ':' .. info.lastlinedefined".utf8),
                           name: "=probe")
            try probe.load(module.compiled, name: "=wrong", mode: "b")
            try probe.call(arguments: 1, results: 1)
            #expect(probe.stack.text(at: -1)?.hasPrefix("=[crescent \(module.name)]:") == true, "\(module.name): \(probe.stack.text(at: -1) ?? "nil")")
        }
    }

    @Test func theCompiledChunkIsWhatRunsNotTheSource() throws {
        let vm = try LuaVM()
        let module = Prelude.Module(name: "probe", source: Array("return 'source'".utf8),
                                    compiled: try Self.dump("return 'compiled'"), input: .nothing)
        try module.load(into: vm)
        try vm.call(arguments: 0, results: 1)
        #expect(vm.stack.text(at: -1) == "compiled")
    }

    @Test func bytecodeThisLuaRefusesFallsBackToTheSourceWithItsChunkName() throws {
        var foreign = try Self.dump("return 'compiled'")
        foreign[4] = 0x53  // the header's version byte: Lua 5.3's
        let module = Prelude.Module(name: "fallback", source: Array("return 'source', debug.getinfo(1, 'S').source".utf8),
                                    compiled: foreign, input: .nothing)
        for _ in 0..<2 {  // the second load takes the dump the first one kept
            let vm = try LuaVM()
            try module.load(into: vm)
            try vm.call(arguments: 0, results: 2)
            #expect(vm.stack.text(at: -2) == "source")
            #expect(vm.stack.text(at: -1) == "=[crescent fallback]")
        }
    }

    /// `inspect` loads on first use: whichever way a script first touches it (a call, a read, a
    /// write, pairs), it is the module from then on, and so is a reference taken before.
    @Test(arguments: [
        "local text = inspect({ 1, 2 })",
        "local depth = inspect.defaults.depth",
        "inspect.extra = 1",
        "for _ in pairs(inspect) do end",
        // In a task: the module's chunk is loaded from inside a coroutine.
        "local text; task(function() text = inspect({ 1 }) end); assert(text == '{ 1 }', text)",
    ])
    func inspectLoadsOnFirstUseWhicheverWayItIsTouched(firstTouch: String) throws {
        let test = try TestHost()
        test.run("""
            local before = inspect
            local loadedAtStart = rawget(inspect, "defaults") ~= nil
            \(firstTouch)
            assert(rawequal(before, inspect))
            assert(type(rawget(inspect, "defaults")) == "table", "defaults is a field of the table itself now")
            assert(inspect({ 1, 2 }) == "{ 1, 2 }", inspect({ 1, 2 }))
            assert(before({ a = 1 }) == "{ a = 1 }")
            inspect.defaults.depth = 1
            assert(inspect({ { 1 } }) == "{ {...} }", inspect({ { 1 } }))
            local names = {}
            for name in pairs(inspect) do names[#names + 1] = name end
            table.sort(names)
            print(loadedAtStart, table.concat(names, ","))
            """)
        #expect(test.stderr == "")
        #expect(test.lines == [firstTouch.hasPrefix("inspect.extra") ? "false\tdefaults,extra" : "false\tdefaults"])
    }

    /// `json` loads on first use as well, its chunk given the marks the binding made at start:
    /// a value a script made with them before (the shapes, the null) is the module's own, and a
    /// task can be the first to touch it (the chunk and its three inputs cross to the coroutine).
    @Test(arguments: [
        "local text = json.encode({ 1 })",
        "local text; task(function() text = json.encode({ 1 }) end); assert(text == '[1]', text)",
    ])
    func jsonLoadsOnFirstUseWithTheMarksMadeAtStart(firstTouch: String) throws {
        let test = try TestHost()
        test.run("""
            local loadedAtStart = rawget(json, "encode") ~= nil
            \(firstTouch)
            assert(type(rawget(json, "encode")) == "function", "the stand-in is the module now")
            assert(json.encode({ a = json.null, b = json.array(), c = json.object() }) == '{"a":null,"b":[],"c":{}}')
            assert(json.decode("[null]")[1] == json.null)
            assert(getmetatable(json.decode("[]")) == getmetatable(json.array()))
            print(loadedAtStart)
            """)
        #expect(test.stderr == "")
        #expect(test.lines == ["false"])
    }

    /// The REPL and remote control load every deferred module, so completion sees their fields.
    @Test func deferredModulesLoadTogetherForTheREPL() throws {
        let test = try TestHost()
        _ = test.host.loadedInspect()
        test.run("""
            print(type(rawget(inspect, "defaults")), type(rawget(json, "decode")))
            """)
        #expect(test.lines == ["table\tfunction"])
    }

    private static func dump(_ source: String) throws -> [UInt8] {
        let vm = try LuaVM()
        try vm.load(Array(source.utf8), name: "=[crescent probe]")
        return try #require(vm.dumpFunction())
    }
}
