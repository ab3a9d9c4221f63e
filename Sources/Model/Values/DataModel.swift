/// An immutable record a service creates (a location, a placemark, a user): a type name and fields.
///
/// Scripts see it as a read-only table; writing a field raises an error naming the type.
public struct DataModel: Sendable, Hashable {
    /// The type name shown in messages and `inspect` (`location`).
    public let typeName: String
    public let fields: [String: Value]

    public init(_ typeName: String, _ fields: [String: Value]) {
        self.typeName = typeName
        // Most models hold no null: then the dictionary is kept as it is, not rebuilt.
        let holdsNull = fields.values.contains { if case .null = $0 { true } else { false } }
        self.fields = holdsNull ? fields.filter { !$0.value.isNull } : fields
    }

    public subscript(key: String) -> Value { fields[key] ?? .null }
}
