import Glibc
import Model

/// Reads the track points of a GPX 1.1 document: each `<trkpt lat= lon=>` with its optional
/// `<ele>` (metres), `<time>` (ISO 8601) and `<hdop>` (accuracy = HDOP × 5 m), in document order
/// across tracks and segments, one at a time through ``XMLReader``, so a file is read as far as
/// the points taken from it (a long track replays in bounded memory). Speed and course are
/// derived from consecutive timed points (``FixMaker``).
///
/// A point whose `lat` or `lon` is missing or out of range fails with `invalid_data`, naming the
/// point; so does a document whose root element is not `<gpx>`, malformed XML, and a tag or a
/// point's field text longer than ``sizeLimit`` (a file of any size is read in bounded memory).
///
/// ```swift
/// var track = try GPXParser(path: "walk.gpx")
/// while let point = try track.next() { print(point.latitude, point.longitude) }
/// ```
struct GPXParser {
    /// One track point as recorded.
    struct Point: Equatable {
        var latitude: Double
        var longitude: Double
        var elevation: Double?
        var time: Double?
        var hdop: Double?
    }

    /// The default ``sizeLimit``: a megabyte, where a point's tag takes about a hundred bytes.
    static let defaultSizeLimit = XMLReader.defaultMaxMarkupBytes

    /// The most bytes one tag (with its attributes) or the text of a point's `<ele>`, `<time>` or
    /// `<hdop>` may take.
    let sizeLimit: Int
    private var xml: XMLReader
    private var count = 0
    private var checkedRoot = false

    /// A document in memory.
    init(bytes: [UInt8], sizeLimit: Int = GPXParser.defaultSizeLimit) throws(ServiceError) {
        xml = try XMLReader(bytes: bytes)
        self.sizeLimit = sizeLimit
        xml.collectsText = false
        xml.maxMarkupBytes = sizeLimit
    }

    /// A file, read as the points are taken.
    init(path: String, sizeLimit: Int = GPXParser.defaultSizeLimit) throws(ServiceError) {
        xml = try XMLReader(path: path)
        self.sizeLimit = sizeLimit
        xml.collectsText = false
        xml.maxMarkupBytes = sizeLimit
    }

    /// The track points of a whole GPX document.
    static func parse(_ bytes: [UInt8]) throws(ServiceError) -> [Point] {
        var parser = try GPXParser(bytes: bytes)
        var points: [Point] = []
        while let point = try parser.next() { points.append(point) }
        return points
    }

    /// The next track point; nil after the last.
    mutating func next() throws(ServiceError) -> Point? {
        var current: Point?
        var text = ""
        while let event = try xml.next() {
            switch event {
            case .start(let element):
                if !checkedRoot {
                    checkedRoot = true
                    guard element.name == "gpx" else {
                        throw ServiceError(.invalidData, "not a GPX file (the root element is <\(element.qualifiedName)>, not <gpx>)")
                    }
                }
                text = ""
                if element.name == "trkpt" {
                    current = try Self.point(element, number: count + 1)
                    count += 1
                }
                // Only the text of a point's own fields is read.
                xml.collectsText = current != nil && ["ele", "time", "hdop"].contains(element.name)
            case .text(let chunk):
                guard text.utf8.count + chunk.utf8.count <= sizeLimit else {
                    throw ServiceError(.invalidData, "GPX track point #\(count) has a field whose text is longer than \(sizeLimit) bytes, the most one may take")
                }
                text += chunk
            case .end(let name, _):
                xml.collectsText = false
                let value = text.trimmingSpaces
                text = ""
                switch name {
                case "ele": current?.elevation = Self.decimal(value)
                case "time": current?.time = CivilTime.parseISO8601(value)
                case "hdop": current?.hdop = Self.decimal(value)
                case "trkpt": if let current { return current }
                default: break
                }
            }
        }
        if !checkedRoot { throw ServiceError(.invalidData, "not a GPX file (no <gpx> element)") }
        return nil
    }

    /// A number as the file writes it; nil for text holding a NUL, which Swift's `Double(_:)`
    /// would read as a C string, stopping there (`"48\0.9"` read as 48).
    private static func decimal<Text: StringProtocol>(_ text: Text) -> Double? {
        guard !text.utf8.contains(0) else { return nil }
        return Double(text)
    }

    private static func point(_ element: XMLElement, number: Int) throws(ServiceError) -> Point {
        guard let latitude = element.attribute("lat").flatMap({ decimal($0.trimmingSpaces) }), (-90...90).contains(latitude) else {
            throw ServiceError(.invalidData, "GPX track point #\(number) has no valid lat attribute")
        }
        guard let longitude = element.attribute("lon").flatMap({ decimal($0.trimmingSpaces) }), (-180...180).contains(longitude) else {
            throw ServiceError(.invalidData, "GPX track point #\(number) has no valid lon attribute")
        }
        return Point(latitude: latitude, longitude: longitude)
    }

    /// The points as fixes (see ``FixMaker``).
    static func fixes(_ points: [Point]) -> [LocationFix] {
        var maker = FixMaker()
        return points.map { maker.fix($0) }
    }

    /// Turns points into fixes in order: time 0 when a point has none; speed and course from
    /// the previous timed point.
    struct FixMaker {
        private var previous: Point?

        mutating func fix(_ point: Point) -> LocationFix {
            var fix = LocationFix(latitude: point.latitude, longitude: point.longitude, altitude: point.elevation,
                                  accuracy: point.hdop.map { $0 * 5 }, time: point.time ?? 0, provider: "gpx")
            if let previous, let start = previous.time, let end = point.time, end > start {
                let from = GeoPoint(latitude: previous.latitude, longitude: previous.longitude)
                let to = GeoPoint(latitude: point.latitude, longitude: point.longitude)
                fix.speed = from.distance(to: to) / (end - start)
                fix.course = from.initialBearing(to: to)
            }
            if point.time != nil { previous = point }
            return fix
        }
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
