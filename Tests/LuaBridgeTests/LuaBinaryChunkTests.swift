import CLua
import LuaBridge
import Testing

/// A compiled chunk copied with some nested functions emptied (what each test's host of
/// `crescent test` loads): the rest runs as before, with its line numbers.
@Suite struct LuaBinaryChunkTests {
    static let source = """
        local log = {}
        local function helper(x) return x * 2 end
        local first = function() log[#log + 1] = "first" .. helper(1) end
        local second = function()
          log[#log + 1] = "second" .. helper(2)
          local inner = function() return "inner" end
          log[#log + 1] = inner()
        end
        local third = function() error("third fails") end
        first() second()
        local ok, err = pcall(third)
        return table.concat(log, ","), tostring(err)
        """

    private func compiled(_ vm: LuaVM) throws -> [UInt8] {
        try vm.load(Array(Self.source.utf8), name: "@chunk.lua")
        defer { vm.stack.pop() }
        return try #require(vm.dumpFunction())
    }

    private func run(_ vm: LuaVM, _ bytes: [UInt8]) throws -> [LuaValue] {
        let base = vm.stack.top
        defer { vm.stack.setTop(base) }
        try vm.load(bytes, name: "@chunk.lua", mode: "b")
        try vm.call(arguments: 0, results: 2)
        return [try vm.stack.value(at: -2, vm: vm), try vm.stack.value(at: -1, vm: vm)]
    }

    @Test func emptiedFunctionsDoNothingAndTheRestRunsWithItsLines() throws {
        let vm = try LuaVM()
        let bytes = try compiled(vm)
        let chunk = try #require(LuaBinaryChunk(bytes))
        #expect(try run(vm, bytes) == ["first2,second4,inner", "chunk.lua:9: third fails"])
        let candidates: Set = [LuaBinaryChunk.key(3, 3), LuaBinaryChunk.key(4, 8), LuaBinaryChunk.key(9, 9)]
        let pruner = LuaBinaryChunk.Pruner(chunk, candidates: candidates)
        // Keeping the second and third: the first does nothing.
        let keepSecond = try #require(pruner.pruned(keeping: [LuaBinaryChunk.key(4, 8), LuaBinaryChunk.key(9, 9)]))
        #expect(keepSecond.count < bytes.count)
        #expect(try run(vm, keepSecond) == ["second4,inner", "chunk.lua:9: third fails"])
        // Keeping only the third: its error still names its line.
        let keepThird = try #require(pruner.pruned(keeping: [LuaBinaryChunk.key(9, 9)]))
        #expect(try run(vm, keepThird) == ["", "chunk.lua:9: third fails"])
        // Keeping everything replaces nothing.
        #expect(pruner.pruned(keeping: candidates) == nil)
    }

    @Test func aFunctionSharingItsLinesWithAnotherIsKept() throws {
        let vm = try LuaVM()
        try vm.load(Array("local a = function() return 1 end local b = function() return 2 end return a() + b()".utf8), name: "=one line")
        let bytes = try #require(vm.dumpFunction())
        vm.stack.pop()
        let chunk = try #require(LuaBinaryChunk(bytes))
        // Both are defined on line 1: neither can be told apart, so neither is replaced.
        #expect(LuaBinaryChunk.Pruner(chunk, candidates: [LuaBinaryChunk.key(1, 1)]).pruned(keeping: []) == nil)
    }

    @Test func whatIsNotALua54ChunkIsRefused() {
        #expect(LuaBinaryChunk(Array("return 1".utf8)) == nil)
        #expect(LuaBinaryChunk([0x1b, 0x4c, 0x75, 0x61, 0x53]) == nil)
    }
}
