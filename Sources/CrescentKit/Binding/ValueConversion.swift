import CLua
import LuaBridge
import Model

/// Why a Lua value could not become a model ``Value``; `path` says where inside a table.
struct ConversionFailure: Error {
    let reason: String
    let path: String

    /// `a function`, `a function at .items[3]`.
    var description: String { path.isEmpty ? reason : "\(reason) at \(path)" }
}

extension ModelBinding {
    // MARK: Model values to Lua

    /// Pushes a model value: JSON-shaped data as plain tables, data models as read-only tables,
    /// objects as their (one per object) userdata.
    func push(_ value: Value, onto stack: LuaStack) {
        _ = stack.ensure(4)
        switch value {
        case .null: stack.pushNil()
        case .bool(let flag): stack.push(flag)
        case .integer(let integer): stack.push(integer)
        case .number(let number): stack.push(number)
        case .string(let string): stack.push(string)
        case .bytes(let bytes): stack.push(LuaString(bytes: bytes))
        case .array(let items):
            stack.newTable(arrayCount: Int32(clamping: items.count))
            for (index, item) in items.enumerated() {
                push(item, onto: stack)
                stack.rawSet(-2, index: Int64(index + 1))
            }
        case .object(let fields):
            stack.newTable(fieldCount: Int32(clamping: fields.count))
            for (key, item) in fields {
                push(item, onto: stack)
                stack.rawSet(-2, key)
            }
        case .model(let model): pushModel(model, onto: stack)
        case .handle(let handle): pushObject(handle.object, onto: stack)
        }
    }

    /// A data model is an empty proxy whose own metatable reads from its fields and refuses writes.
    private func pushModel(_ model: DataModel, onto stack: LuaStack) {
        stack.newTable()                                             // proxy
        stack.newTable(fieldCount: 7)                                // proxy mt
        push(.object(model.fields), onto: stack)                     // proxy mt fields
        if let methods = modelMethodTables[model.typeName] {
            methods.push(onto: stack)                                // proxy mt fields methodsmt
            lua_setmetatable(stack.state, -2)                        // proxy mt fields
        }
        stack.rawSet(-2, "__index")
        stack.push(model.typeName)
        stack.rawSet(-2, "__name")
        stack.push(model.typeName)
        stack.rawSet(-2, "__metatable")
        modelMetamethods.push(onto: stack)                           // proxy mt shared
        for name in ["__newindex", "__pairs", "__len", "__tostring"] {
            stack.rawGet(-1, name)
            stack.rawSet(-3, name)
        }
        stack.pop()                                                  // proxy mt
        lua_pushboolean(stack.state, 1)
        lua_rawsetp(stack.state, -2, modelMarker)
        lua_setmetatable(stack.state, -2)                            // proxy
    }

    /// The fields table and type name when the value at `index` is a data model proxy.
    func modelFields(at index: Int32, in stack: LuaStack) -> String? {
        guard stack.type(at: index) == .table, lua_getmetatable(stack.state, index) != 0 else { return nil }
        defer { stack.pop() }
        guard lua_rawgetp(stack.state, -1, modelMarker) == LUA_TBOOLEAN else {
            stack.pop()
            return nil
        }
        stack.pop()
        guard stack.rawGet(-1, "__name") == .string, let name = stack.text(at: -1) else {
            stack.pop()
            return nil
        }
        stack.pop()
        return name
    }

    /// Pushes a service error as a table with `code`, `message`, `service`, `method` whose
    /// `tostring` reads `geocoder.reverse: invalid_argument: ...`.
    func push(_ error: ServiceError, onto stack: LuaStack) {
        push(.object(["code": .string(error.code.name), "message": .string(error.message),
                      "service": .string(error.service), "method": .string(error.method)]), onto: stack)
        errorMetatable.push(onto: stack)
        lua_setmetatable(stack.state, -2)
    }

    // MARK: Lua values to model values

    /// Reads the Lua value at `index` as a model value.
    func value(at index: Int32, in stack: LuaStack) throws(ConversionFailure) -> Value {
        var visiting: Set<UnsafeRawPointer> = []
        let top = stack.top
        do {
            return try convert(stack.absolute(index), stack, path: "", depth: 0, visiting: &visiting)
        } catch {
            stack.setTop(top)
            throw error
        }
    }

    private func convert(_ index: Int32, _ stack: LuaStack, path: String, depth: Int,
                         visiting: inout Set<UnsafeRawPointer>) throws(ConversionFailure) -> Value {
        switch stack.type(at: index) {
        case .none, .nil: return .null
        case .boolean: return .bool(stack.boolean(at: index))
        case .number:
            if stack.isInteger(at: index), let integer = stack.integer(at: index) { return .integer(integer) }
            return .number(stack.number(at: index) ?? .nan)
        case .string: return stringValue(at: index, in: stack)
        case .userdata:
            if let box = anyObjectBox(at: index, in: stack) { return .handle(box.handle) }
            throw ConversionFailure(reason: "a \(stack.typeName(at: index))", path: path)
        case .function, .thread, .lightUserdata:
            throw ConversionFailure(reason: "a \(stack.typeName(at: index))", path: path)
        case .table:
            guard depth < 100 else { throw ConversionFailure(reason: "a table nested too deeply", path: path) }
            guard let identity = lua_topointer(stack.state, index) else { return .null }
            guard visiting.insert(identity).inserted else { throw ConversionFailure(reason: "a cycle", path: path) }
            defer { visiting.remove(identity) }
            if let typeName = modelFields(at: index, in: stack) {
                lua_getmetatable(stack.state, index)
                stack.rawGet(-1, "__index")
                let fields = try convert(stack.absolute(-1), stack, path: path, depth: depth + 1, visiting: &visiting)
                stack.pop(2)
                guard case .object(let values) = fields else { return .model(DataModel(typeName, [:])) }
                return .model(DataModel(typeName, values))
            }
            return try convertTable(index, stack, path: path, depth: depth, visiting: &visiting)
        }
    }

    /// A Lua string as text when it is valid UTF-8, else as its bytes unchanged (a binary HTTP
    /// body must reach the service byte for byte).
    private func stringValue(at index: Int32, in stack: LuaStack) -> Value {
        var length = 0
        guard let pointer = lua_tolstring(stack.state, index, &length) else { return .string("") }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
        if let text = String(validating: bytes, as: UTF8.self) { return .string(text) }
        return .bytes(Array(bytes))
    }

    private func convertTable(_ index: Int32, _ stack: LuaStack, path: String, depth: Int,
                              visiting: inout Set<UnsafeRawPointer>) throws(ConversionFailure) -> Value {
        guard stack.ensure(4) else { throw ConversionFailure(reason: "a table nested too deeply", path: path) }
        var positional: [Int64: Value] = [:]
        var named: [String: Value] = [:]
        stack.pushNil()
        while lua_next(stack.state, index) != 0 {                        // ... key value
            switch stack.type(at: -2) {
            case .string:
                let key = stack.text(at: -2) ?? ""
                named[key] = try convert(stack.absolute(-1), stack, path: path + "." + key, depth: depth + 1, visiting: &visiting)
            case .number where stack.isInteger(at: -2):
                let key = stack.integer(at: -2) ?? 0
                positional[key] = try convert(stack.absolute(-1), stack, path: path + "[\(key)]", depth: depth + 1, visiting: &visiting)
            default:
                let kind = stack.typeName(at: -2)
                stack.pop(2)
                throw ConversionFailure(reason: "a table with a \(kind) key", path: path)
            }
            stack.pop()                                                     // ... key
        }
        if !positional.isEmpty && !named.isEmpty {
            throw ConversionFailure(reason: "a table with both array items and named fields", path: path)
        }
        if !named.isEmpty { return .object(named) }
        var items: [Value] = []
        items.reserveCapacity(positional.count)
        for position in 1...max(Int64(positional.count), 1) where !positional.isEmpty {
            guard let item = positional[position] else {
                throw ConversionFailure(reason: "an array with a hole at [\(position)]", path: path)
            }
            items.append(item)
        }
        return .array(items)
    }
}

/// A unique address marking data model metatables (a light userdata key, never dereferenced).
/// Immutable after initialisation, so sharing it between threads is safe.
nonisolated(unsafe) let modelMarker = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
