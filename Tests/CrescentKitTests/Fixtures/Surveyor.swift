import Model

/// A service answering data models of two declared schemas and one built from a dictionary, for
/// the binding's per-schema caches.
final class Surveyor: Service {
    let changes = ChangePublisher()
    var interface: AnyInterface { Self.declaration }

    static let placeSchema = ModelSchema("place", ["name", "note", "lat"])
    static let readingSchema = ModelSchema("reading", ["degrees", "unit", "count"])

    static let declaration: AnyInterface = Interface<Surveyor>(name: "surveyor", summary: "Models for tests.") { d in
        d.method("survey", [], returns: "places and readings", "Models of two declared schemas and one built from a dictionary.",
                 immediate: { _, _ throws(ServiceError) in
                     .array([
                         .model(DataModel(placeSchema, ["home", "by the river", 48.5])),
                         .model(DataModel(readingSchema, [21.5, .null, 3])),
                         .model(DataModel(placeSchema, ["work", .null, 45.75])),
                         .model(DataModel("place", ["name": "home", "note": "by the river", "lat": 48.5])),
                         .model(DataModel(placeSchema, ["home", "by the river", 48.5])),
                     ])
                 })
    }.erased
}

/// Registers one Surveyor as `services.surveyor`.
struct SurveyorPlugin: Plugin {
    let name = "surveyor"

    func makeServices(_ context: PluginContext) throws(ServiceError) -> [any Service] { [Surveyor()] }
}
