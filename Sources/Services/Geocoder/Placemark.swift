public import Model

/// A named place the geocoder found: GeoNames' name, first- and second-level administrative
/// divisions, country, position and (for reverse lookups) great-circle distance in metres.
///
/// Scripts see it as the read-only table `placemark` (``value``).
public struct Placemark: Sendable, Hashable {
    /// The place's name as GeoNames writes it, in UTF-8 (`Sèvres`, `Île-de-France`).
    public let name: String
    /// The first-level division (a region, a state); empty when GeoNames has none.
    public let admin1: String
    /// The second-level division (a département, a county); empty when GeoNames has none.
    public let admin2: String
    /// The ISO 3166-1 alpha-2 code (`FR`).
    public let countryCode: String
    /// The country's name from ISO 3166-1 (`France`).
    public let country: String
    /// Where the place is (GeoNames' coordinates, 5 decimals).
    public let point: GeoPoint
    /// Inhabitants, as GeoNames counts them (0 when it does not know).
    public let population: Int
    /// Metres from the point asked about; nil for forward searches.
    public let distance: Double?

    /// The `placemark` data model's fields, shared by every placemark.
    static let schema = ModelSchema("placemark", ["name", "admin1", "admin2", "countryCode", "country", "lat", "lon",
                                                  "population", "distance"])

    /// The `placemark` data model; empty divisions, an unknown population and (for searches) the
    /// distance are left out.
    public var value: Value {
        .model(DataModel(Self.schema, [
            .string(name),
            admin1.isEmpty ? .null : .string(admin1),
            admin2.isEmpty ? .null : .string(admin2),
            .string(countryCode),
            .string(country),
            .number(point.latitude),
            .number(point.longitude),
            population > 0 ? .integer(Int64(population)) : .null,
            distance.map(Value.number) ?? .null,
        ]))
    }
}
