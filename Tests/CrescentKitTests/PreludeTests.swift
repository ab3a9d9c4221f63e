@testable import CrescentKit
import LuaBridge
import Testing

/// The prelude's embedded bytecode: what a host loads instead of compiling the sources.
struct PreludeTests {
    @Test func eachCompiledChunkIsTheDumpOfItsSourceByTheLinkedLua() throws {
        for module in Prelude.allModules {
            let vm = try LuaVM()
            try vm.load(module.source, name: module.chunkName)
            #expect(vm.dumpFunction() == module.compiled,
                    "Prelude/Compiled/\(module.name).luac is not the dump of \(module.name).lua: run 'make prelude'")
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

    private static func dump(_ source: String) throws -> [UInt8] {
        let vm = try LuaVM()
        try vm.load(Array(source.utf8), name: "=[crescent probe]")
        return try #require(vm.dumpFunction())
    }
}
