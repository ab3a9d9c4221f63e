import CLua
import LuaBridge
import Testing

@Suite(.serialized) struct LuaObjectTypeTests {
    @Test func methodsPropertiesAndReadOnlyFields() throws {
        let vm = try LuaVM()
        registerCounter(vm)
        let results = try evaluate(vm, """
            local c = newCounter()
            c:add(2) c:add(3)
            local ok, e = pcall(function() c.value = 9 end)
            return c.value, c.missing, ok, e, getmetatable(c), tostring(c):match("^Counter")
            """)
        #expect(results[0] == 5)
        #expect(results[1] == .nil)
        #expect(results[2] == false)
        #expect(results[3] == "test:3: cannot set 'value' on a Counter: its fields are read-only")
        #expect(results[4] == "Counter", "__metatable hides the real metatable")
        #expect(results[5] == "Counter")
    }

    @Test func theMetatableIsBuiltOnceAndCached() throws {
        let vm = try LuaVM()
        let first = registerCounter(vm)
        let again = vm.objectType(Counter.self, name: "Counter")
        #expect(first === again)
    }

    /// One Swift class shown as several Lua types: each key has its own metatable, apart from the
    /// class's own, and asking again by key answers the one built first.
    @Test func keyedTypesAreCachedApartFromTheirClass() throws {
        let vm = try LuaVM()
        let plain = registerCounter(vm)
        let first = vm.objectType(Counter.self, name: "First", key: "first")
        let second = vm.objectType(Counter.self, name: "Second", key: "second")
        #expect(first !== plain && second !== plain && first !== second)
        #expect(vm.objectType(Counter.self, name: "First again", key: "first") === first)
        #expect(vm.objectType(Counter.self, name: "Counter") === plain)
        first.push(Counter(), onto: vm.stack)
        vm.setGlobal("keyed")
        #expect(try evaluateOne(vm, "return tostring(keyed):match('^%a+')") == "First")
    }

    @Test func wrongSelfIsAnArgumentError() throws {
        let vm = try LuaVM()
        registerCounter(vm)
        let message = try evaluateOne(vm, """
            local c = newCounter()
            local ok, e = pcall(c.add, {}, 1)
            local ok2, e2 = pcall(c.add, io.stdout, 1)
            return e .. " | " .. e2
            """)
        #expect(message == "bad argument #1 to 'add' (Counter expected, got table) | bad argument #1 to 'add' (Counter expected, got FILE*)")
    }

    /// A userdata's type is what it was made as: another type's metatable put on it with
    /// debug.setmetatable makes it neither a valid receiver of that type nor of its own.
    @Test func anObjectWearingAnotherTypesMetatableIsRefused() throws {
        let vm = try LuaVM()
        registerCounter(vm)
        let labels = vm.objectType(Label.self, name: "Label", methods: ["show": { _ in .none }])
        labels.push(Label(), onto: vm.stack)
        vm.setGlobal("label")
        let message = try evaluateOne(vm, """
            local c = newCounter()
            debug.setmetatable(label, debug.getmetatable(c))  -- a Label dressed as a Counter
            local ok, e = pcall(function() return label:add(1) end)
            local ok2, e2 = pcall(function() return label.value end)
            return tostring(ok) .. " " .. e:match("bad argument.*") .. " | " .. tostring(ok2) .. " " .. tostring(e2)
            """)
        #expect(message == "false bad argument #1 to 'add' (Counter expected, got Counter) | true nil")
    }

    @Test func gcTwiceByHandIsHarmless() throws {
        let vm = try LuaVM()
        registerCounter(vm)
        let before = Counter.released
        let message = try evaluateOne(vm, """
            local c = newCounter()
            local gc = debug.getmetatable(c).__gc
            gc(c) gc(c) gc({}) gc(42)
            local ok, e = pcall(c.add, c, 1)
            return e
            """)
        #expect(Counter.released == before + 1)
        #expect(message == "bad argument #1 to 'add' (Counter was already finalized)")
        vm.close()
        #expect(Counter.released == before + 1, "closing runs __gc again without a second release")
    }

    @Test func callsAndUserdataLeaveNoReferencesBehind() throws {
        let vm = try LuaVM()
        registerCounter(vm)
        _ = try evaluate(vm, "collectgarbage()")
        let entriesBefore = registryEntries(vm)
        let referencesBefore = vm.liveReferences
        let releasedBefore = Counter.released
        _ = try evaluate(vm, """
            local c = newCounter()
            for i = 1, 1000000 do c:add(1) end
            assert(c.value == 1000000)
            for i = 1, 100000 do newCounter():add(i) end
            c = nil
            collectgarbage() collectgarbage()
            """)
        #expect(Counter.released - releasedBefore == 100_001)
        #expect(registryEntries(vm) == entriesBefore)
        #expect(vm.liveReferences == referencesBefore)
    }

    @Test func referencesAreReleasedWhenDropped() throws {
        let vm = try LuaVM()
        let before = registryEntries(vm)
        do {
            var refs: [LuaRef] = []
            for index in 0..<1000 {
                vm.stack.push("value \(index)")
                refs.append(vm.ref())
            }
            #expect(vm.liveReferences == 1000)
            #expect(registryEntries(vm) == before + 1000)
        }
        #expect(vm.liveReferences == 0)
        #expect(registryEntries(vm) == before)
    }
}

/// A second exported class, for type confusion tests.
private final class Label {}
