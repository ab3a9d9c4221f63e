/// A Lua value copied into Swift.
///
/// Integers and floats stay distinct (`3` is `.integer(3)`, `3.0` is `.number(3.0)`), strings are
/// bytes (embedded zeros and invalid UTF-8 survive a round trip), and tables become dictionaries
/// keyed by Lua values, so arrays with holes keep their holes. Functions, userdata and threads are
/// held by a ``LuaRef``, which pins them in the registry until the reference is dropped.
///
/// ```swift
/// let point: LuaValue = ["lat": 48.85, "lon": 2.35]
/// let list = LuaValue.array([1, 2, 3])
/// ```
public enum LuaValue: Hashable {
    case `nil`
    case boolean(Bool)
    case integer(Int64)
    case number(Double)
    case string(LuaString)
    case table([LuaValue: LuaValue])
    /// A function, userdata, thread or light userdata, pinned in the registry.
    case reference(LuaRef)

    /// A table holding `items` at keys `1...items.count`.
    public static func array(_ items: [LuaValue]) -> LuaValue {
        var table: [LuaValue: LuaValue] = [:]
        table.reserveCapacity(items.count)
        for (index, item) in items.enumerated() where item != .nil {
            table[.integer(Int64(index + 1))] = item
        }
        return .table(table)
    }

    /// The items at keys `1...n` when the table is a sequence with no other keys.
    public var arrayValue: [LuaValue]? {
        guard case .table(let table) = self else { return nil }
        var items: [LuaValue] = []
        items.reserveCapacity(table.count)
        for index in 1...max(table.count, 1) where !table.isEmpty {
            guard let item = table[.integer(Int64(index))] else { return nil }
            items.append(item)
        }
        return items
    }

    /// The string-keyed entries when every key is a string.
    public var dictionaryValue: [String: LuaValue]? {
        guard case .table(let table) = self else { return nil }
        var result: [String: LuaValue] = [:]
        for (key, value) in table {
            guard case .string(let name) = key else { return nil }
            result[name.description] = value
        }
        return result
    }

    /// The value of field `key` when this is a table.
    public subscript(key: String) -> LuaValue {
        guard case .table(let table) = self else { return .nil }
        return table[.string(LuaString(key))] ?? .nil
    }

    /// Lua's type name for the value (`nil`, `boolean`, `number`, `string`, `table`, …).
    public var typeName: String {
        switch self {
        case .nil: "nil"
        case .boolean: "boolean"
        case .integer, .number: "number"
        case .string: "string"
        case .table: "table"
        case .reference(let ref): ref.typeName
        }
    }
}

extension LuaValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .nil }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(LuaString(value)) }
    public init(arrayLiteral elements: LuaValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, LuaValue)...) {
        var table: [LuaValue: LuaValue] = [:]
        for (key, value) in elements where value != .nil { table[.string(LuaString(key))] = value }
        self = .table(table)
    }
}
