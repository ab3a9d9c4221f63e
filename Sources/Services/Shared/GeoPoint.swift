import Glibc
public import Model

/// A position on the Earth in degrees, checked: latitude in [-90, 90], longitude in [-180, 180].
///
/// ```swift
/// let paris = try GeoPoint(value: ["lat": 48.8566, "lon": 2.3522])
/// paris.distance(to: GeoPoint(latitude: 51.5072, longitude: -0.1276))   // 343_5xx metres
/// ```
public struct GeoPoint: Sendable, Hashable {
    /// The mean Earth radius (IUGG), in metres, used for great-circle distances.
    public static let earthRadius = 6_371_008.8

    /// Degrees north, [-90, 90].
    public let latitude: Double
    /// Degrees east, [-180, 180].
    public let longitude: Double

    /// A point from degrees the caller has already checked.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// A point from a location record (`{lat=, lon=}`, a location or any table with those fields).
    ///
    /// - Parameter label: prefixes the error message (`location #3: `), empty for none; made only
    ///   for an error (a batch checks 100,000 points).
    /// - Throws: `invalid_argument` naming the field that is missing, not a number, NaN or out
    ///   of range (`latitude 123 is outside [-90, 90]`).
    public init(value: Value, label: @autoclosure () -> String = "") throws(ServiceError) {
        latitude = try Self.coordinate(value, "lat", "latitude", limit: 90, label: label)
        longitude = try Self.coordinate(value, "lon", "longitude", limit: 180, label: label)
    }

    private static func coordinate(_ value: Value, _ key: String, _ word: String, limit: Double,
                                   label: () -> String) throws(ServiceError) -> Double {
        let field = value[key]
        guard !field.isNull else {
            // The other spellings people use (`lng`, `latitude`): the one given is named.
            let others = key == "lat" ? ["latitude", "Lat", "y"] : ["lng", "long", "longitude", "Lon", "x"]
            let given = others.first { !value[$0].isNull }.map { "; it has '\($0)': name it '\(key)'" } ?? ""
            throw ServiceError(.invalidArgument, "\(label())\(word) is missing (field '\(key)')\(given)")
        }
        guard let number = field.doubleValue else {
            throw ServiceError(.invalidArgument, "\(label())\(word) must be a number (field '\(key)'), got \(field.typeName)")
        }
        guard !number.isNaN else { throw ServiceError(.invalidArgument, "\(label())\(word) is NaN (field '\(key)')") }
        guard (-limit...limit).contains(number) else {
            throw ServiceError(.invalidArgument, "\(label())\(word) \(formatNumber(number)) is outside [-\(Int(limit)), \(Int(limit))]")
        }
        return number
    }

    /// `123`, `123.5`, `inf`: numbers as a person would write them in a message.
    static func formatNumber(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }

    /// The great-circle distance in metres (haversine, on a sphere of ``earthRadius``).
    public func distance(to other: GeoPoint) -> Double {
        let radians = Double.pi / 180
        let phi1 = latitude * radians
        let phi2 = other.latitude * radians
        let dPhi = (other.latitude - latitude) * radians
        let dLambda = (other.longitude - longitude) * radians
        let a = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * Self.earthRadius * asin(min(1, a.squareRoot()))
    }

    /// The unit vector of this point, computed exactly as the data file's k-d tree was built.
    var unitVector: SIMD3<Double> {
        let phi = latitude * (Double.pi / 180)
        let lambda = longitude * (Double.pi / 180)
        let cosPhi = cos(phi)
        return SIMD3(cosPhi * cos(lambda), cosPhi * sin(lambda), sin(phi))
    }
}
