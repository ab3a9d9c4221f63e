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

    /// The `placemark` data model; empty divisions are left out.
    public var value: Value {
        var fields: [String: Value] = [
            "name": .string(name),
            "countryCode": .string(countryCode),
            "country": .string(country),
            "lat": .number(point.latitude),
            "lon": .number(point.longitude),
        ]
        if !admin1.isEmpty { fields["admin1"] = .string(admin1) }
        if !admin2.isEmpty { fields["admin2"] = .string(admin2) }
        if population > 0 { fields["population"] = .integer(Int64(population)) }
        if let distance { fields["distance"] = .number(distance) }
        return .model(DataModel("placemark", fields))
    }
}
