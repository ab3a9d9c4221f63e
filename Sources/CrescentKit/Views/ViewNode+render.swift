import Model
import Mustache

extension ViewNode {
    /// Lays the component out in `width` columns, as its kind does: its first `limit` lines.
    func render(width: Int, limit: Int) -> [String] {
        kind.render(self, width: width, limit: limit)
    }

    /// How many lines the component has at `width`, without laying out a table's, a stack's or a
    /// row's lines.
    func lineCount(width: Int) -> Int {
        kind.lineCount(of: self, width: max(width, 1))
    }

    /// How a value reads in a view: strings as they are, integers without `.0`, floats compactly.
    static func text(_ value: Value) -> String {
        switch value {
        case .null: return ""
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let integer): return String(integer)
        case .number(let number):
            if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
            return String(number)
        case .string(let string): return string
        case .bytes(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .array(let items): return items.map(text).joined(separator: ", ")
        case .object(let fields): return "{" + fields.keys.sorted().map { "\($0)=\(text(fields[$0] ?? .null))" }.joined(separator: ", ") + "}"
        case .model(let model): return model["name"].stringValue ?? model.typeName
        case .handle(let handle): return "<\(handle.typeName)>"
        case .packed(let models): return text(.array(models.values))
        }
    }

    /// The data of a template as Mustache sees it: dictionaries, arrays and strings.
    static func mustacheContext(_ value: Value) -> Any {
        switch value {
        case .null: return ""
        case .bool(let flag): return flag
        case .integer, .number, .string, .bytes, .handle: return text(value)
        case .array(let items): return items.map(mustacheContext)
        case .object(let fields): return fields.dictionary.mapValues(mustacheContext)
        case .model(let model): return model.fields.dictionary.mapValues(mustacheContext)
        case .packed(let models): return models.values.map(mustacheContext)
        }
    }
}
