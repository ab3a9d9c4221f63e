import CLua
import LuaBridge
import Testing

@Suite struct LuaCoroutineTests {
    @Test func swiftYieldsAndResumesACoroutine() throws {
        let vm = try LuaVM()
        vm.register("pause") { stack in
            guard stack.isYieldable else { throw LuaRaise("pause: not in a coroutine") }
            stack.push("paused")
            return .yield(1)
        }
        try vm.load(Array("local got = pause() return 'finished with ' .. got".utf8), name: "=co")
        let coroutine = LuaCoroutine(vm: vm)
        guard case .yielded(let count) = coroutine.resume(arguments: 0) else {
            Issue.record("expected a yield")
            return
        }
        #expect(count == 1)
        #expect(coroutine.stack.text(at: -1) == "paused")
        coroutine.stack.pop(count)
        coroutine.stack.push("resumed")
        guard case .finished(let results) = coroutine.resume(arguments: 1) else {
            Issue.record("expected the end")
            return
        }
        #expect(results == 1)
        #expect(coroutine.stack.text(at: -1) == "finished with resumed")
        #expect(try evaluateOne(vm, "return pcall(pause)") == false, "yielding outside a coroutine is an error")
    }

    @Test func failuresCarryTheCoroutinesTraceback() throws {
        let vm = try LuaVM()
        try vm.load(Array("local function deep() error('inside') end\ndeep()".utf8), name: "@task.lua")
        let coroutine = LuaCoroutine(vm: vm)
        guard case .failed(let error, let value) = coroutine.resume(arguments: 0) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.message.hasPrefix("task.lua:1: inside"))
        #expect(error.message.contains("stack traceback:"))
        #expect(error.message.contains("task.lua:2"))
        value.push(onto: vm.stack)
        #expect(vm.stack.text(at: -1) == "task.lua:1: inside", "the value has no traceback")
        vm.stack.pop()
    }
}
