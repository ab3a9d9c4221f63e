import Glibc
import Model

/// Reads the track points of a GPX 1.1 file: each `<trkpt lat= lon=>` with its optional `<ele>`
/// (metres), `<time>` (ISO 8601) and `<hdop>` (accuracy = HDOP × 5 m), in document order across
/// tracks and segments. Speed and course are derived from consecutive timed points.
///
/// A small XML scanner, enough for GPX: elements, attributes, text, entities, comments, CDATA and
/// processing instructions; namespace prefixes are ignored. A point whose `lat` or `lon` is
/// missing or out of range fails the whole file with `invalid_data`, naming the point.
///
/// ```swift
/// let points = try GPXParser.parse(Array(text.utf8))
/// ```
enum GPXParser {
    /// One track point as recorded.
    struct Point: Equatable {
        var latitude: Double
        var longitude: Double
        var elevation: Double?
        var time: Double?
        var hdop: Double?
    }

    /// The track points of a GPX document.
    static func parse(_ bytes: [UInt8]) throws(ServiceError) -> [Point] {
        var scanner = XMLScanner(bytes: bytes)
        var points: [Point] = []
        var current: Point?
        var text = ""
        var sawRoot = false
        while let token = try scanner.next() {
            switch token {
            case .start(let name, let attributes, let selfClosing):
                text = ""
                if name == "gpx" { sawRoot = true }
                guard name == "trkpt" else { continue }
                let number = points.count + 1
                guard let latitude = attributes["lat"].flatMap(Double.init), (-90...90).contains(latitude) else {
                    throw ServiceError(.invalidData, "GPX track point #\(number) has no valid lat attribute")
                }
                guard let longitude = attributes["lon"].flatMap(Double.init), (-180...180).contains(longitude) else {
                    throw ServiceError(.invalidData, "GPX track point #\(number) has no valid lon attribute")
                }
                current = Point(latitude: latitude, longitude: longitude)
                if selfClosing, let point = current {
                    points.append(point)
                    current = nil
                }
            case .text(let chunk):
                text += chunk
            case .end(let name):
                let value = text.trimmingSpaces
                text = ""
                switch name {
                case "ele": current?.elevation = Double(value)
                case "time": current?.time = CivilTime.parseISO8601(value)
                case "hdop": current?.hdop = Double(value)
                case "trkpt":
                    if let point = current { points.append(point) }
                    current = nil
                default: break
                }
            }
        }
        guard sawRoot else { throw ServiceError(.invalidData, "not a GPX file (no <gpx> element)") }
        return points
    }

    /// The points as fixes (time 0 when a point has none); speed and course come from the
    /// previous timed point.
    static func fixes(_ points: [Point]) -> [LocationFix] {
        var fixes: [LocationFix] = []
        var previous: Point?
        for point in points {
            var fix = LocationFix(latitude: point.latitude, longitude: point.longitude, altitude: point.elevation,
                                  accuracy: point.hdop.map { $0 * 5 }, time: point.time ?? 0, provider: "gpx")
            if let previous, let start = previous.time, let end = point.time, end > start {
                let from = GeoPoint(latitude: previous.latitude, longitude: previous.longitude)
                let to = GeoPoint(latitude: point.latitude, longitude: point.longitude)
                fix.speed = from.distance(to: to) / (end - start)
                fix.course = from.initialBearing(to: to)
            }
            if point.time != nil { previous = point }
            fixes.append(fix)
        }
        return fixes
    }
}

extension GeoPoint {
    /// Degrees clockwise from true north, [0, 360), of the great circle from here to `other`.
    func initialBearing(to other: GeoPoint) -> Double {
        let radians = Double.pi / 180
        let phi1 = latitude * radians, phi2 = other.latitude * radians
        let dLambda = (other.longitude - longitude) * radians
        let y = sin(dLambda) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)
        let degrees = atan2(y, x) / radians
        return degrees < 0 ? degrees + 360 : degrees
    }
}

extension String {
    /// The string without leading and trailing whitespace.
    var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
