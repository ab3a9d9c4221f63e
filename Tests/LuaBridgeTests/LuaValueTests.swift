import CLua
import LuaBridge
import Testing

@Suite struct LuaValueTests {
    /// Pushes `value` into Lua, reads it back, and also lets Lua check it with `check(v)`.
    private func roundTrip(_ value: LuaValue, luaCheck: String? = nil) throws -> LuaValue {
        let vm = try LuaVM()
        vm.setGlobal("v", value)
        if let luaCheck {
            #expect(try evaluateOne(vm, "return \(luaCheck)") == .boolean(true), "\(luaCheck)")
        }
        return try evaluateOne(vm, "return v")
    }

    @Test func integersStayIntegers() throws {
        for integer: Int64 in [0, 1, -1, .max, .min, 1 << 53 + 1] {
            #expect(try roundTrip(.integer(integer), luaCheck: "math.type(v) == 'integer'") == .integer(integer))
        }
        let vm = try LuaVM()
        #expect(try evaluateOne(vm, "return math.mininteger") == .integer(.min))
        #expect(try evaluateOne(vm, "return 3") == .integer(3))
        #expect(try evaluateOne(vm, "return 3.0") == .number(3.0))
    }

    @Test func floatsKeepNaNAndInfinities() throws {
        #expect(try roundTrip(.number(.infinity), luaCheck: "v == math.huge") == .number(.infinity))
        #expect(try roundTrip(.number(-.infinity), luaCheck: "v == -math.huge") == .number(-.infinity))
        #expect(try roundTrip(.number(0.1), luaCheck: "v == 0.1 and math.type(v) == 'float'") == .number(0.1))
        guard case .number(let nan) = try roundTrip(.number(.nan), luaCheck: "v ~= v") else {
            Issue.record("NaN did not come back as a float")
            return
        }
        #expect(nan.isNaN)
    }

    @Test func stringsAreBytes() throws {
        let bytes: [UInt8] = [0x61, 0x00, 0x62, 0xFF, 0xC3, 0x28, 0x00]
        let value = LuaValue.string(LuaString(bytes: bytes))
        #expect(try roundTrip(value, luaCheck: "#v == 7 and v:byte(2) == 0 and v:byte(4) == 255") == value)
        #expect(try roundTrip("héllo ✓", luaCheck: "v == 'héllo ✓'") == "héllo ✓")
        let vm = try LuaVM()
        #expect(try evaluateOne(vm, #"return "x\0y""#) == .string(LuaString(bytes: [0x78, 0, 0x79])))
    }

    @Test func nestedTablesAndHoles() throws {
        let nested: LuaValue = ["name": "point", "coords": [1.5, 2, "three"], "deep": ["a": ["b": ["c": true]]]]
        #expect(try roundTrip(nested, luaCheck: "v.deep.a.b.c == true and v.coords[2] == 2 and #v.coords == 3") == nested)
        let vm = try LuaVM()
        let holes = try evaluateOne(vm, "return { 1, nil, 3, [10] = 'ten' }")
        guard case .table(let table) = holes else {
            Issue.record("not a table")
            return
        }
        #expect(table.count == 3)
        #expect(table[1] == 1 && table[3] == 3 && table[10] == "ten" && table[2] == nil)
        #expect(holes.arrayValue == nil)
        #expect(try roundTrip(holes, luaCheck: "v[1] == 1 and v[2] == nil and v[3] == 3 and v[10] == 'ten'") == holes)
        #expect(try evaluateOne(vm, "return {10, 20, 30}").arrayValue == [10, 20, 30])
    }

    @Test func cyclesAreRefusedNotLooped() throws {
        let vm = try LuaVM()
        let top = vm.stack.top
        try vm.load(Array("local t = {} t.self = t return t".utf8), name: "=cycle")
        try vm.call(arguments: 0, results: 1)
        #expect(throws: LuaRaise.self) { try vm.stack.value(at: -1, vm: vm) }
        vm.stack.setTop(top)
    }

    @Test func functionsComeBackAsReferences() throws {
        let vm = try LuaVM()
        let value = try evaluateOne(vm, "return function(x) return x * 2 end")
        guard case .reference(let function) = value else {
            Issue.record("expected a reference, got \(value)")
            return
        }
        #expect(function.typeName == "function")
        #expect(try vm.call(function, 21) == 42)
        #expect(try vm.call(function, [.number(1.25)]) == [.number(2.5)])
    }
}
