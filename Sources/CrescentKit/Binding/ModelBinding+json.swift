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

    /// The value at `index` as JSON holds it, or why it cannot be in `json.encode`'s words
    /// (`value.x is NaN: ...`), naming the place from `root`: what remote answers and event
    /// notifications send, so a client reads what `json.encode` would write, or its refusal.
    func jsonForm(at index: Int32, in stack: LuaStack, root: String = "value") -> Result<Value, JSONRefusal> {
        let converted = convertedValue(at: index, in: stack)
        if let failure = converted.failure {
            return .failure(JSONRefusal(failure.message(root: root, subject: "JSON values")))
        }
        if let failure = converted.value.jsonFailure { return .failure(JSONRefusal(failure.message(root: root))) }
        return .success(converted.value)
    }

    /// The value at `index` converted after marks.lua's `resolve` replaced each part that has
    /// `__tojson` with what it returns (``convertedValue(at:in:)`` found one): what `json.encode`
    /// writes, on every path. A `__tojson` that is not a function, or that raises, is the failure,
    /// naming its place; the stand-in is what a failed part stands in as.
    func resolvedValue(at index: Int32, in stack: LuaStack) -> (value: Value, failure: ConversionFailure?) {
        let standIn: Value = stack.type(at: index) == .table ? .array([]) : .null
        let base = stack.top
        defer { stack.setTop(base) }
        guard stack.ensure(5) else { return (standIn, ConversionFailure(.tooDeep)) }
        let value = stack.absolute(index)
        // `resolve` runs Lua (the scripts' __tojson), which may convert values of its own.
        let refuses = refusesMetatables
        tables.jsonResolve.push(onto: stack)                         // resolve
        stack.pushValue(at: value)                                   // resolve value
        let status = lua_pcallk(stack.state, 1, 3, 0, 0, nil)         // ok copy|path reason
        refusesMetatables = refuses
        guard status == LUA_OK else {
            let error = stack.popError(status)
            return (standIn, ConversionFailure(.toJSON(path: "", reason: "could not be resolved: \(error.message)")))
        }
        guard stack.boolean(at: base + 1) else {
            return (standIn, ConversionFailure(.toJSON(path: stack.text(at: base + 2) ?? "", reason: stack.text(at: base + 3) ?? "")))
        }
        let converted = convertedValue(at: base + 2, in: stack, findsToJSON: false)
        return (converted.value, converted.failure)
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

/// Why a value has no JSON form, in `json.encode`'s words: a remote eval answer's `valueError`,
/// an event notification's `error`.
struct JSONRefusal: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
