import LuaBridge
import Testing

/// The named stack operations the host uses instead of the C API (LuaStack+operations.swift).
@Suite struct LuaStackOperationsTests {
    /// The stack's values from the bottom, as text.
    private func texts(_ stack: LuaStack) -> [String] {
        stack.top > 0 ? (1...stack.top).map { stack.text(at: $0) ?? stack.typeName(at: $0) } : []
    }

    @Test func insertRemoveAndReplaceRearrangeTheStack() throws {
        let vm = try LuaVM()
        let stack = vm.stack
        for name in ["a", "b", "c"] { stack.push(name) }
        stack.insert(at: 1)
        #expect(texts(stack) == ["c", "a", "b"])
        stack.remove(at: 2)
        #expect(texts(stack) == ["c", "b"])
        stack.push("d")
        stack.replace(at: 1)
        #expect(texts(stack) == ["d", "b"])
    }

    @Test func moveCarriesValuesToACoroutinesStackInOrder() throws {
        let vm = try LuaVM()
        try vm.load(Array("return ...".utf8), name: "=co")
        let coroutine = LuaCoroutine(vm: vm)
        vm.stack.push("x")
        vm.stack.push("y")
        vm.stack.move(2, to: coroutine.stack)
        #expect(vm.stack.top == 0)
        guard case .finished(let count) = coroutine.resume(arguments: 2) else {
            Issue.record("expected the end")
            return
        }
        #expect(count == 2)
        #expect(texts(coroutine.stack) == ["x", "y"])
    }

    @Test func nextVisitsEveryPairWithoutMetamethods() throws {
        let vm = try LuaVM()
        try vm.run("t = setmetatable({ a = 1, b = 2 }, { __index = function() error('no') end, __pairs = error })")
        vm.getGlobal("t")                                             // t
        let stack = vm.stack
        var keys: [String] = []
        stack.pushNil()                                               // t nil
        while stack.next(in: 1) {                                     // t key value
            keys.append(stack.text(at: -2) ?? "?")
            stack.pop()                                               // t key
        }
        #expect(keys.sorted() == ["a", "b"])
        #expect(stack.top == 1)
        stack.push("a")
        #expect(stack.rawGet(1) == .number)
        stack.push("missing")
        #expect(stack.rawGet(1) == .nil, "a raw read runs no __index")
    }

    @Test func rawEqualIgnoresEq() throws {
        let vm = try LuaVM()
        try vm.run("local mt = { __eq = function() return true end } a = setmetatable({}, mt) b = setmetatable({}, mt)")
        vm.getGlobal("a")
        vm.getGlobal("b")
        vm.getGlobal("a")
        #expect(!vm.stack.rawEqual(1, 2))
        #expect(vm.stack.rawEqual(1, 3))
    }

    @Test func protectedOperationsReportAnErrorWithItsValueOnTop() throws {
        let vm = try LuaVM()
        let stack = vm.stack
        try vm.run("t = setmetatable({}, { __index = function(_, k) error({ key = k }) end, __tostring = function() error('bad') end })")
        vm.getGlobal("t")                                             // t
        stack.push("k")                                               // t k
        #expect(!stack.pushIndexed(1))                                // t err
        #expect(stack.type(at: -1) == .table, "the error value itself, no message made of it")
        stack.pop()
        #expect(!stack.pushDescription(at: 1))                        // t err
        stack.pop()
        stack.push(42)
        #expect(stack.pushDescription(at: -1))                        // t 42 "42"
        #expect(stack.text(at: -1) == "42")
        stack.setTop(0)
        try vm.load(Array("error({ code = 7 })".utf8), name: "=raise")
        #expect(!stack.callKeepingError(arguments: 0))
        #expect(stack.type(at: -1) == .table, "raised again unchanged by the caller: no traceback added")
        stack.setTop(0)
        try vm.load(Array("return 1, 2, 3".utf8), name: "=three")
        #expect(stack.callKeepingError(arguments: 0))
        #expect(stack.top == 3, "all results kept")
    }

    @Test func functionsTellWhereTheyWereDefinedAndShareUpvalues() throws {
        let vm = try LuaVM()
        try vm.run("""
            local x = 1
            function f() return x end
            function g() return x end
            """, name: "@spec/defs.lua")
        vm.getGlobal("f")
        vm.getGlobal("g")
        let stack = vm.stack
        #expect(stack.upvalueIdentity(of: 1, 1) != nil)
        #expect(stack.upvalueIdentity(of: 1, 1) == stack.upvalueIdentity(of: 2, 1))
        #expect(stack.pushUpvalue(of: 1, 1))
        #expect(stack.integer(at: -1) == 1)
        stack.pop()
        #expect(!stack.pushUpvalue(of: 1, 2))
        #expect(stack.isCFunction(at: 1) == false)
        let definition = stack.popDefinition()
        #expect(definition?.source == "spec/defs.lua")
        #expect(definition?.line == 3)
        #expect(stack.top == 1, "the function was popped")
        vm.getGlobal("print")
        #expect(stack.isCFunction(at: -1))
    }

    @Test func bytesAndConcatenationKeepEveryByte() throws {
        let vm = try LuaVM()
        let stack = vm.stack
        let raw: [UInt8] = [0x61, 0x00, 0xFF]
        raw.withUnsafeBytes { stack.push(bytes: $0) }
        stack.push("z")
        stack.concatenate(2)
        #expect(stack.bytes(at: -1).map { Array($0) } == raw + [0x7A])
        stack.pushNil()
        #expect(stack.bytes(at: -1) == nil)
    }

    /// A C function called from a file's chunk through a chunk loaded from a string (the host's
    /// prelude) finds the file's line; with none on the stack, nil.
    @Test func innermostFilePlaceSkipsStringChunksAndC() throws {
        let vm = try LuaVM()
        var seen: [String?] = []
        vm.pushFunction { stack in
            seen.append(stack.innermostFilePlace(levels: 64))
            return .none
        }
        vm.setGlobal("where")
        try vm.run("function relay() where() end", name: "=[host prelude]")
        try vm.run("\n\nrelay()", name: "@app.lua")
        try vm.run("relay()", name: "=stdin")
        #expect(seen == ["app.lua:3: ", nil])
    }
}
