import Model

/// Checks that a value is a JSON-shaped record before anything is written, and names the place
/// of the first problem (`record.tags[3]`, `records[2].meta.x`).
///
/// A record is a table with named fields (Lua's `{}` arrives as an empty array and counts as an
/// empty record). Fields hold what JSON holds, under JSON's one rule and with its wording
/// (``JSONEncodingFailure``: no NaN or infinity, text that is valid UTF-8, no objects, nested at
/// most ``maxDepth`` levels), and no NUL character, which PostgreSQL cannot store. A data model (such as `session.currentUser`) is stored as a plain
/// table of its fields. Functions, cycles and tables mixing array items with named fields never
/// get here: the binding reports them as `invalid_argument`, naming the path the same way
/// (``ValuePath``).
enum RecordValidator {
    /// How deep tables may nest inside a record (the record itself is level 1): JSON's one limit.
    static let maxDepth = Value.jsonMaxDepth

    /// The fields of the record `value`, checked, with any data model inside turned into a
    /// plain table (as it will read back from the database).
    ///
    /// - Parameter path: how the message names the value (`record`, `records[2]`, `fields`).
    static func record(_ value: Value, path: String) throws(ServiceError) -> Fields {
        switch value {
        case .object(let fields):
            if try check(value, path: path, depth: 1) { return fields.mapValues(plain) }
            return fields
        case .model(let model):
            _ = try check(value, path: path, depth: 1)
            return model.fields.mapValues(plain)
        case .array(let items) where items.isEmpty:
            return [:]
        case .array:
            throw ServiceError(.invalidArgument, "\(path) must be a record (a table with named fields), got an array")
        default:
            throw ServiceError(.invalidArgument, "\(path) must be a record (a table with named fields), got \(describe(value))")
        }
    }

    /// Checks one value at `depth` (1 for the record itself); true when it holds a data model.
    private static func check(_ value: Value, path: @autoclosure () -> String, depth: Int) throws(ServiceError) -> Bool {
        switch value {
        case .null, .bool, .integer:
            return false
        case .string(let text):
            try checkNoNUL(text, path: path())
            return false
        case .number(let number):
            guard number.isFinite else { throw refused(.nonFinite(number), path: path()) }
            return false
        case .bytes:
            throw refused(.invalidUTF8, path: path())
        case .handle(let handle):
            throw refused(.object(handle.typeName), path: path())
        case .array(let items):
            try checkDepth(path: path(), depth: depth)
            var sawModel = false
            for (index, item) in items.enumerated() {
                if try check(item, path: path() + ValuePath.index(Int64(index + 1)), depth: depth + 1) { sawModel = true }
            }
            return sawModel
        case .object(let fields):
            try checkDepth(path: path(), depth: depth)
            var sawModel = false
            for (key, item) in fields {
                try checkNoNUL(key, path: path(), key: true)
                if try check(item, path: path() + ValuePath.member(key), depth: depth + 1) { sawModel = true }
            }
            return sawModel
        case .model(let model):
            try checkDepth(path: path(), depth: depth)
            for (key, item) in model.fields { _ = try check(item, path: path() + ValuePath.member(key), depth: depth + 1) }
            return true
        case .packed(let models):
            return try check(.array(models.values), path: path(), depth: depth)
        }
    }

    /// `value` with every data model turned into a plain table of its fields.
    private static func plain(_ value: Value) -> Value {
        switch value {
        case .model(let model): .object(model.fields.mapValues(plain))
        case .object(let fields): .object(fields.mapValues(plain))
        case .array(let items): .array(items.map(plain))
        case .packed(let models): .array(models.values.map(plain))
        default: value
        }
    }

    /// Refuses a NUL character, which PostgreSQL cannot store in text or `jsonb`: both backends
    /// refuse it alike, before anything is sent.
    private static func checkNoNUL(_ text: String, path: String, key: Bool = false) throws(ServiceError) {
        guard text.utf8.contains(0) else { return }
        throw ServiceError(.invalidArgument, "\(path) has a \(key ? "field name" : "string") with a NUL character (\\0): records cannot hold it; remove it or encode the text (base64, say)")
    }

    private static func checkDepth(path: String, depth: Int) throws(ServiceError) {
        guard depth <= maxDepth else { throw refused(.tooDeep, path: path) }
    }

    /// JSON's refusal of `problem` at `path`, in its one wording.
    private static func refused(_ problem: JSONEncodingFailure.Problem, path: String) -> ServiceError {
        ServiceError(.invalidArgument, JSONEncodingFailure(problem).message(root: path))
    }

    /// `a number`, `a boolean`, `nil`: a value's kind, with an article.
    static func describe(_ value: Value) -> String {
        switch value {
        case .null: "nil"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string, .bytes: "a string"
        case .array, .object, .packed: "a table"
        case .model(let model): "a \(model.typeName)"
        case .handle(let handle): "a \(handle.typeName) object"
        }
    }
}
