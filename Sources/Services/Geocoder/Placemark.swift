public import Model

/// A named place the geocoder found, as CoreLocation's `CLPlacemark` names one: the locality (the
/// town or city) and, when the place is a section of a city, the sub-locality; the first- and
/// second-level administrative divisions, the country, the IANA time zone, position and (for
/// reverse lookups) great-circle distance in metres.
///
/// Scripts see it as the read-only table `placemark` (``value``).
public struct Placemark: Sendable, Hashable {
    /// What to call the place: the locality (`Paris` for a point in its 4th arrondissement, `Tokyo`
    /// for one in Eifuku).
    public let name: String
    /// The town or city the place belongs to, as GeoNames writes it in UTF-8 (`Paris`, `Sèvres`).
    public let locality: String
    /// The section of the city (`Paris 04 Hôtel-de-Ville`, `Eifuku`) when the place is one; nil for
    /// a town or city itself.
    public let subLocality: String?
    /// The first-level division (a region, a state: `Île-de-France`); empty when GeoNames has none.
    public let admin1: String
    /// The second-level division (a département, a county); empty when GeoNames has none.
    public let admin2: String
    /// The ISO 3166-1 alpha-2 code (`FR`).
    public let countryCode: String
    /// The country's name from ISO 3166-1 (`France`).
    public let country: String
    /// The IANA time zone (`Europe/Paris`); empty when GeoNames gives none.
    public let timeZone: String
    /// Where the place (the section, for a section) is: GeoNames' coordinates, 5 decimals.
    public let point: GeoPoint
    /// Inhabitants of the place (of the section, for a section), as GeoNames counts them (0 when
    /// it does not know).
    public let population: Int
    /// Metres from the point asked about; nil for forward searches.
    public let distance: Double?

    /// The `placemark` data model's fields, shared by every placemark.
    static let schema = ModelSchema("placemark", ["name", "locality", "subLocality", "admin1", "admin2", "countryCode",
                                                  "country", "timeZone", "lat", "lon", "population", "distance"])

    /// The `placemark` data model; a missing sub-locality, empty divisions and time zone, an
    /// unknown population and (for searches) the distance are left out.
    public var value: Value {
        .model(DataModel(Self.schema, [
            .string(name),
            .string(locality),
            subLocality.map(Value.string) ?? .null,
            admin1.isEmpty ? .null : .string(admin1),
            admin2.isEmpty ? .null : .string(admin2),
            .string(countryCode),
            .string(country),
            timeZone.isEmpty ? .null : .string(timeZone),
            .number(point.latitude),
            .number(point.longitude),
            population > 0 ? .integer(Int64(population)) : .null,
            distance.map(Value.number) ?? .null,
        ]))
    }
}
