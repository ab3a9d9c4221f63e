/// An immutable record a service creates (a location, a placemark, a user): a type name and fields.
///
/// Scripts see it as a read-only table; writing a field raises an error naming the type. A model
/// is its schema (type and field names, shared by every model of a declared type) and one value
/// per name; a `.null` value is a field the model does not have.
public struct DataModel: Sendable, Hashable {
    /// The type name and field names.
    public let schema: ModelSchema
    /// One value per name of ``schema``, `.null` where the model has no such field.
    public let values: [Value]

    /// The type name shown in messages and `inspect` (`location`).
    public var typeName: String { schema.typeName }

    /// The fields the model has (its null values left out), as a record built on each read.
    public var fields: Fields {
        var fields: [Fields.Element] = []
        fields.reserveCapacity(values.count)
        for (name, value) in zip(schema.names, values) where !value.isNull { fields.append((name, value)) }
        return Fields(distinctFields: fields)
    }

    /// A model of type `typeName` with `fields` (null fields left out).
    public init(_ typeName: String, _ fields: Fields) {
        var names: [String] = []
        var values: [Value] = []
        names.reserveCapacity(fields.count)
        values.reserveCapacity(fields.count)
        for (name, value) in fields where !value.isNull {
            names.append(name)
            values.append(value)
        }
        self.schema = ModelSchema(oneOff: typeName, names)
        self.values = values
    }

    /// A model of `schema`'s type with one value per name (`.null` for a field it does not have).
    /// Missing values at the end are nulls; values past the names are ignored.
    public init(_ schema: ModelSchema, _ values: [Value]) {
        self.schema = schema
        let count = schema.names.count
        if values.count == count {
            self.values = values
        } else {
            self.values = Array(values.prefix(count)) + Array(repeating: .null, count: max(0, count - values.count))
        }
    }

    public subscript(key: String) -> Value {
        guard let position = schema.position(of: key) else { return .null }
        return values[position]
    }

    /// Equal when of the same type with the same fields, whatever their order.
    public static func == (lhs: DataModel, rhs: DataModel) -> Bool {
        if lhs.schema === rhs.schema { return lhs.values == rhs.values }
        return lhs.typeName == rhs.typeName && lhs.fields == rhs.fields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(typeName)
        hasher.combine(fields)
    }
}
