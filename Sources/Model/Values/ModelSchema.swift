/// The type name and field names of a data model type, shared by every model a service builds
/// from it, so a model carries only its values.
///
/// A service that hands out many models of one type declares the schema once; the binding then
/// converts each model without hashing a field name (it keeps the names as Lua strings per
/// schema).
///
/// ```swift
/// static let schema = ModelSchema("placemark", ["name", "country", "lat", "lon"])
/// let place = DataModel(schema, [.string("Paris"), .string("France"), .number(48.85), .number(2.35)])
/// ```
public final class ModelSchema: Sendable {
    /// The type name shown in messages and `inspect` (`placemark`).
    public let typeName: String
    /// The field names, in the order of a model's values.
    public let names: [String]
    /// True for a schema declared once and shared by many models; false for the one-off schema
    /// of a model built from a record's fields, which the binding does not keep.
    public let isShared: Bool

    /// A shared schema: `names` must be distinct.
    public init(_ typeName: String, _ names: [String]) {
        self.typeName = typeName
        self.names = names
        self.isShared = true
    }

    init(oneOff typeName: String, _ names: [String]) {
        self.typeName = typeName
        self.names = names
        self.isShared = false
    }

    /// The position of `name` among ``names``: a scan, which beats hashing for a model's few
    /// fields.
    public func position(of name: String) -> Int? {
        names.firstIndex(of: name)
    }
}
