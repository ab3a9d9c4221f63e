import CLua
import LuaBridge
import Model

/// The Swift half of the `json` global: the prelude's `json.lua` keeps only `json.null`, the
/// shape marks, `__tojson` and the options in Lua, and calls these, so `json.encode` and
/// `json.decode` are the very codec the store, `--ui json` and remote answers use (``Value/json(indent:sortKeys:)``,
/// ``Value/decodeJSON(_:maxDepth:)``). Neither raises: each answers its result, or nil and the
/// message, which the Lua side raises naming the function.
extension ModelBinding {
    /// `encode(value, indent, sortKeys, resolved)` → the JSON text; nil and the message; or
    /// false when a part of `value` has a `__tojson` metamethod and `resolved` is not true (the
    /// Lua side then calls them and passes the result, resolved).
    func encodeJSON(_ stack: LuaStack) -> LuaReturn {
        let indent = stack.type(at: 2) == .string ? stack.text(at: 2) : nil
        let sortKeys = stack.type(at: 3) != .boolean || stack.boolean(at: 3)
        let converted = convertedValue(at: 1, in: stack, findsToJSON: !stack.boolean(at: 4))
        if converted.foundToJSON {
            stack.push(false)
            return .one
        }
        if let failure = converted.failure {
            return Self.failed(failure.message(root: "value", subject: "JSON values"), stack)
        }
        do throws(JSONEncodingFailure) {
            stack.push(try converted.value.json(indent: indent, sortKeys: sortKeys))
            return .one
        } catch {
            return Self.failed(error.message(root: "value"), stack)
        }
    }

    /// `decode(text, maxDepth)` → the value (arrays and objects carrying json.array's and
    /// json.object's marks, nulls as `json.null`), or nil and the message.
    func decodeJSON(_ stack: LuaStack) -> LuaReturn {
        var length = 0
        guard let pointer = lua_tolstring(stack.state, 1, &length) else { return Self.failed("expected a string", stack) }
        let maxDepth = stack.integer(at: 2).map { Int(clamping: $0) } ?? Value.jsonMaxDepth
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: length)
        let value: Value
        do throws(ServiceError) {
            value = try Value.decodeJSON(bytes, maxDepth: maxDepth)
        } catch {
            return Self.failed(error.message, stack)
        }
        _ = stack.ensure(4)
        pushDecoded(value, stack)
        return .one
    }

    private static func failed(_ message: String, _ stack: LuaStack) -> LuaReturn {
        stack.pushNil()
        stack.push(message)
        return .values(2)
    }

    /// Pushes decoded JSON as `json.decode` gives it: every array and object marked with its
    /// shape, so `[]` and `{}` (and an object whose fields are later removed) encode as they
    /// came; every null `json.null`, so keys and positions are kept.
    private func pushDecoded(_ value: Value, _ stack: LuaStack) {
        switch value {
        case .null: tables.jsonMarks.null.push(onto: stack)
        case .bool(let flag): stack.push(flag)
        case .integer(let integer): stack.push(integer)
        case .number(let number): stack.push(number)
        case .string(let string): stack.push(string)
        case .array(let items):
            _ = stack.ensure(4)
            stack.newTable(arrayCount: Int32(clamping: items.count))
            for (index, item) in items.enumerated() {
                pushDecoded(item, stack)
                stack.rawSet(-2, index: Int64(index + 1))
            }
            tables.jsonMarks.array.push(onto: stack)
            lua_setmetatable(stack.state, -2)
        case .object(let fields):
            _ = stack.ensure(4)
            stack.newTable(fieldCount: Int32(clamping: fields.count))
            for (key, item) in fields {
                stack.push(key)
                pushDecoded(item, stack)
                lua_rawset(stack.state, -3)
            }
            tables.jsonMarks.object.push(onto: stack)
            lua_setmetatable(stack.state, -2)
        default: push(value, onto: stack)
        }
    }
}
