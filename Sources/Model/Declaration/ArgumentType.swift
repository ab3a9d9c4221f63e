/// The type a method argument must have, as declared by its service.
///
/// It checks the shape of a value (a number, a record with numeric `lat` and `lon`); whether the
/// value makes sense (a latitude of 123) is the service's call, reported through the completion.
public indirect enum ArgumentType: Sendable, CustomStringConvertible {
    case any
    case string
    case integer
    case number
    case boolean
    /// A table of any shape.
    case table
    case array(of: ArgumentType)
    /// A record with named fields, such as `location {lat=, lon=}`. Extra fields are allowed.
    case record(String, fields: [Field])
    case oneOf([ArgumentType])

    /// One field of a record type.
    public struct Field: Sendable {
        public let name: String
        public let type: ArgumentType
        public let isOptional: Bool

        public init(_ name: String, _ type: ArgumentType, optional: Bool = false) {
            self.name = name
            self.type = type
            self.isOptional = optional
        }
    }

    /// `a location {lat=, lon=}`, `an array of strings`: the wording of argument errors.
    public var description: String {
        switch self {
        case .any: "a value"
        case .string: "a string"
        case .integer: "an integer"
        case .number: "a number"
        case .boolean: "a boolean"
        case .table: "a table"
        case .array(let element): "an array of \(element.plural)"
        case .record(let name, let fields):
            "\(Self.article(name)) \(name) {\(fields.filter { !$0.isOptional }.map { "\($0.name)=" }.joined(separator: ", "))}"
        case .oneOf(let types): types.map(\.description).joined(separator: " or ")
        }
    }

    /// The short name used in signatures: `location`, `string`, `{strings}`.
    public var shortName: String {
        switch self {
        case .any: "value"
        case .string: "string"
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        case .table: "table"
        case .array(let element): "{\(element.plural)}"
        case .record(let name, _): name
        case .oneOf(let types): types.map(\.shortName).joined(separator: "|")
        }
    }

    private var plural: String {
        switch self {
        case .record(let name, _): name + "s"
        case .array(let element): "arrays of \(element.plural)"
        case .oneOf: "values"
        default: shortName + "s"
        }
    }

    /// The article `word` takes: `an integer`, `a string`, `a url`.
    public static func article(_ word: String) -> String {
        let lower = word.lowercased()
        guard let first = lower.first else { return "a" }
        // Words that start with a "you" sound take "a".
        if ["uni", "use", "usu", "uri", "url", "uuid"].contains(where: lower.hasPrefix) { return "a" }
        return "aeiou".contains(first) ? "an" : "a"
    }

    /// True when `value` has this shape.
    public func accepts(_ value: Value) -> Bool {
        switch (self, value) {
        case (.any, _): return !value.isNull
        case (.string, .string), (.string, .bytes): return true
        case (.integer, .integer): return true
        case (.integer, .number(let number)): return Int64(exactly: number) != nil
        case (.number, .integer), (.number, .number): return true
        case (.boolean, .bool): return true
        case (.table, .array), (.table, .object), (.table, .model): return true
        case (.array(let element), .array(let items)): return items.allSatisfy(element.accepts)
        case (.record(_, let fields), .array(let items)) where items.isEmpty:
            // `{}` arrives as an empty array: it is a record with every field missing.
            return fields.allSatisfy(\.isOptional)
        case (.record(_, let fields), .object), (.record(_, let fields), .model):
            return fields.allSatisfy { field in
                let item = value[field.name]
                return item.isNull ? field.isOptional : field.type.accepts(item)
            }
        case (.oneOf(let types), _): return types.contains { $0.accepts(value) }
        default: return false
        }
    }
}
