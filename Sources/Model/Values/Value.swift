/// A value crossing between a service and its consumers: JSON-shaped data, typed data models and
/// references to observable objects (such as a store's collections).
///
/// Integers and floats stay distinct, as in Lua 5.4. Values are immutable snapshots: a service that
/// hands one out never sees it changed.
///
/// ```swift
/// let place: Value = .model(DataModel("placemark", ["name": "Paris", "lat": 48.85]))
/// ```
public enum Value: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    /// A string of bytes that need not be UTF-8 text (an HTTP body, a Lua string holding binary
    /// data). Scripts see a Lua string with exactly these bytes.
    case bytes([UInt8])
    case array([Value])
    /// A table with string keys (see ``Fields``).
    case object(Fields)
    /// A read-only record with a type name (a location, a placemark).
    case model(DataModel)
    /// An observable object owned by a service (a collection), shown to scripts as an object with
    /// properties, methods and events of its own.
    case handle(ObjectHandle)
    /// An array of data models of one schema in one buffer (a batch of placemarks): scripts see
    /// it as the array ``PackedModels/values`` would be, made faster; elsewhere it is that array.
    case packed(PackedModels)

    /// The field `key` of an object or data model, else `.null`.
    public subscript(key: String) -> Value {
        switch self {
        case .object(let fields): fields[key] ?? .null
        case .model(let model): model[key]
        default: .null
        }
    }

    /// The number as a Double, for integers and floats alike.
    public var doubleValue: Double? {
        switch self {
        case .integer(let integer): Double(integer)
        case .number(let number): number
        default: nil
        }
    }

    /// The integer, also from a float with an exact integer value.
    public var integerValue: Int64? {
        switch self {
        case .integer(let integer): integer
        case .number(let number): Int64(exactly: number)
        default: nil
        }
    }

    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    public var arrayValue: [Value]? {
        if case .array(let items) = self { return items }
        if case .packed(let models) = self { return models.values }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// The Lua-facing type word used in messages: `nil`, `boolean`, `number`, `string`, `table`,
    /// or a data model's type name. Bytes that are not UTF-8 text are a Lua string too, but a
    /// message that refuses them must not read "must be a string, got string".
    public var typeName: String {
        switch self {
        case .null: "nil"
        case .bool: "boolean"
        case .integer, .number: "number"
        case .string: "string"
        case .bytes: "string that is not valid UTF-8"
        case .array, .object, .packed: "table"
        case .model(let model): model.typeName
        case .handle(let handle): handle.typeName
        }
    }

    /// `2.5`, `"ten"`, `a table`: a setting of the wrong type as a message shows it.
    public var settingText: String {
        switch self {
        case .integer(let integer): String(integer)
        case .number(let number): String(number)
        case .string(let text): "\"\(text)\""
        default: "a \(typeName)"
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: Value...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, Value)...) {
        self = .object(Fields(fields: elements.map { (key: $0.0, value: $0.1) }))
    }
}
