public import Model

/// One position report from a provider: what scripts see as a `location` table.
///
/// Optional measurements are nil when the provider did not give them.
public struct LocationFix: Sendable, Equatable {
    /// Degrees, WGS 84.
    public var latitude: Double
    public var longitude: Double
    /// Metres above mean sea level.
    public var altitude: Double?
    /// Metres per second over the ground.
    public var speed: Double?
    /// Degrees clockwise from true north, [0, 360).
    public var course: Double?
    /// Estimated horizontal error in metres.
    public var accuracy: Double?
    /// When the fix was taken (seconds since the Unix epoch, UTC), as the source recorded it.
    public var time: Double
    /// The provider that made it: `gpsd`, `nmea`, `gpx` or `fixed`.
    public var provider: String

    public init(latitude: Double, longitude: Double, altitude: Double? = nil, speed: Double? = nil,
                course: Double? = nil, accuracy: Double? = nil, time: Double, provider: String) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.accuracy = accuracy
        self.time = time
        self.provider = provider
    }

    /// The `location` data model: `lat`, `lon`, `altitude`, `speed`, `course`, `accuracy`, `time`,
    /// `provider` (absent measurements are left out).
    public var value: Value {
        .model(DataModel(Self.schema, [
            .number(latitude), .number(longitude), .number(time), .string(provider),
            altitude.map(Value.number) ?? .null, speed.map(Value.number) ?? .null,
            course.map(Value.number) ?? .null, accuracy.map(Value.number) ?? .null,
        ]))
    }

    /// The `location` data model's fields, shared by every fix.
    static let schema = ModelSchema("location", ["lat", "lon", "time", "provider", "altitude", "speed", "course", "accuracy"])

    /// The great-circle distance to `other`, in metres.
    public func distance(to other: LocationFix) -> Double {
        GeoPoint(latitude: latitude, longitude: longitude)
            .distance(to: GeoPoint(latitude: other.latitude, longitude: other.longitude))
    }

    /// True when the coordinates are numbers within [-90, 90] and [-180, 180].
    var isValid: Bool {
        (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }

    /// The fix as scripts may see it: nil when its position is not a position; a measurement
    /// outside what can be measured (a negative speed or accuracy, a course outside [0, 360), an
    /// altitude below the deepest mine or above low orbit, anything not finite) is dropped
    /// rather than passed on. Receivers and gpsd send such values when they have none.
    func validated() -> LocationFix? {
        guard isValid, time.isFinite else { return nil }
        var fix = self
        func within(_ value: Double?, _ range: ClosedRange<Double>) -> Double? { value.flatMap { range.contains($0) ? $0 : nil } }
        fix.altitude = within(altitude, -12_000...1_000_000)
        fix.speed = within(speed, 0...10_000)
        fix.course = within(course, 0...360).map { $0 == 360 ? 0 : $0 }
        fix.accuracy = within(accuracy, 0...20_000_000)
        return fix
    }
}
