import Model

/// A `find` query: fields a record must equal, then an order, an offset and a limit.
///
/// Equality follows Lua: numbers compare by value whatever their subtype (`1 == 1.0`), tables
/// compare field by field. `order = "field"` sorts by that field ascending, `"-field"`
/// descending; numbers sort before strings, strings before booleans, booleans before tables, and
/// records without the field come last. Ties keep insertion order.
struct RecordQuery: Sendable {
    var criteria: Fields
    var order: (field: String, descending: Bool)?
    var offset = 0
    var limit = Int.max

    /// The options of `find`.
    static let options: [OptionTable.Option] = [.integer("limit", in: 0...Int64.max), .integer("offset", in: 0...Int64.max), .string("order")]

    /// The query from `find`'s arguments.
    init(criteria: Value, options: Value) throws(ServiceError) {
        switch criteria {
        case .object, .model:
            // A query holds what a record can (the one JSON rule, no NUL): a value no record can
            // hold would match nothing, silently.
            self.criteria = try RecordValidator.record(criteria, path: "query")
        case .array(let items) where items.isEmpty: self.criteria = [:]
        default:
            throw ServiceError(.invalidArgument, "the query must be a table of field = value, got \(RecordValidator.describe(criteria))")
        }
        let options = try OptionTable.check(options, Self.options)
        if let limit = options["limit"]?.integerValue { self.limit = Int(clamping: limit) }
        if let offset = options["offset"]?.integerValue { self.offset = Int(clamping: offset) }
        if let order = options["order"] {
            guard let field = order.stringValue, field != "", field != "-" else {
                throw ServiceError(.invalidArgument, "options.order must be a field name (\"-name\" for descending), got \(RecordValidator.describe(order))")
            }
            self.order = field.hasPrefix("-") ? (String(field.dropFirst()), true) : (field, false)
        }
    }

    /// The matching records of `records` (in insertion order), ordered and cut to the page.
    func run(on records: [Value]) -> [Value] {
        var matches = criteria.isEmpty ? records : records.filter { record in
            criteria.allSatisfy { field, wanted in Self.equal(record[field], wanted) }
        }
        if let order {
            // Sorting pairs with their position keeps ties in insertion order.
            let sorted = matches.enumerated().sorted { left, right in
                let a = left.element[order.field], b = right.element[order.field]
                // Records without the field come last either way.
                if a.isNull != b.isNull { return b.isNull }
                let comparison = Self.compare(a, b)
                if comparison != 0 { return order.descending ? comparison > 0 : comparison < 0 }
                return left.offset < right.offset
            }
            matches = sorted.map(\.element)
        }
        guard offset < matches.count else { return [] }
        let end = limit >= matches.count - offset ? matches.count : offset + limit
        return Array(matches[offset..<end])
    }

    // MARK: Equality and order

    /// Lua's equality on JSON-shaped values (numbers by value, tables field by field).
    static func equal(_ left: Value, _ right: Value) -> Bool {
        switch (left, right) {
        case (.integer(let a), .integer(let b)): return a == b
        case (.integer, .number), (.number, .integer), (.number, .number): return compareNumbers(left, right) == 0
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1) }
        case (.object, .object), (.object, .model), (.model, .object), (.model, .model):
            let a = fields(left), b = fields(right)
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { equal(value, $0) } ?? false }
        default: return left == right
        }
    }

    /// -1, 0 or 1: the order of two field values (see the type's documentation).
    static func compare(_ left: Value, _ right: Value) -> Int {
        let rankLeft = rank(left), rankRight = rank(right)
        if rankLeft != rankRight { return rankLeft < rankRight ? -1 : 1 }
        switch (left, right) {
        case (.string(let a), .string(let b)):
            if a == b { return 0 }
            return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        default:
            return rankLeft == 0 ? compareNumbers(left, right) : 0
        }
    }

    private static func rank(_ value: Value) -> Int {
        switch value {
        case .integer, .number: 0
        case .string: 1
        case .bool: 2
        case .array, .object, .model, .handle, .bytes, .packed: 3
        case .null: 4
        }
    }

    /// Compares two numbers exactly, integers and floats alike.
    private static func compareNumbers(_ left: Value, _ right: Value) -> Int {
        switch (left, right) {
        case (.integer(let a), .integer(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.number(let a), .number(let b)): return a == b ? 0 : (a < b ? -1 : 1)
        case (.integer(let a), .number(let b)): return -compareFloat(b, to: a)
        case (.number(let a), .integer(let b)): return compareFloat(a, to: b)
        default: return 0
        }
    }

    /// Compares a float with an integer without rounding the integer.
    private static func compareFloat(_ float: Double, to integer: Int64) -> Int {
        if float.isNaN { return 1 }
        let twoToThe63 = 9_223_372_036_854_775_808.0
        if float >= twoToThe63 { return 1 }
        if float < -twoToThe63 { return -1 }
        let whole = float.rounded(.down)
        // Invariant: -2^63 <= whole < 2^63 here, so the conversion is exact.
        let truncated = Int64(whole)
        if truncated != integer { return truncated < integer ? -1 : 1 }
        return float > whole ? 1 : 0
    }

    private static func fields(_ value: Value) -> Fields {
        switch value {
        case .object(let fields): fields
        case .model(let model): model.fields
        default: [:]
        }
    }
}

extension Value {
    /// The keys of an object or data model (none for anything else).
    var objectKeys: [String] {
        switch self {
        case .object(let fields): Array(fields.keys)
        case .model(let model): Array(model.fields.keys)
        default: []
        }
    }
}
