/// Turns NMEA 0183 sentences into fixes: `RMC` (position, speed, course, date), `GGA`
/// (position, altitude, HDOP) and `GLL` (position) from any talker (`$GPRMC`, `$GNGGA`, …).
///
/// Every sentence must carry a valid checksum (`*hh`); a sentence with a wrong or missing
/// checksum, or too few fields (a truncated line), is counted in ``rejected`` and skipped; what
/// comes before a line's last `$` is noise (`$$GNRMC`, a cut line), as gpsd reads it. Other
/// sentence types are ignored. Sentences with the same UTC time make one fix (an epoch), reported
/// once the epoch has every kind of sentence (of `RMC`, `GGA`, `GLL`) the epoch before it had
/// (the first: both `RMC` and `GGA`), when a sentence of another time arrives, or at
/// ``finish()`` — unless the recording ends in the middle of an epoch (it lacks a kind the epoch
/// before had, and the kind that ended it), which gpsd does not report either. `RMC` or `GLL` with status `V` or mode `N` (no fix) or `S` (simulator), and `GGA`
/// with fix quality 0 (none) or 8 (simulator) or fewer than 3 satellites in use, carry no position.
///
/// The date comes from `RMC`; a log of `GGA` only takes `today`'s date (UTC) and moves to the
/// next day when the time of day goes backwards. Accuracy is HDOP × 5 m (a typical receiver's
/// range error), speed is converted from knots.
///
/// ```swift
/// var parser = NMEAParser(today: 0)
/// let fixes = parser.feed("$GPRMC,120000.00,A,4851.3960,N,00221.1320,E,10.0,90.0,150624,,,A*54")
/// ```
struct NMEAParser {
    /// Sentences skipped for a bad checksum, a missing checksum or missing fields.
    private(set) var rejected = 0
    /// Sentences that made (part of) a fix.
    private(set) var accepted = 0

    private var epoch: Epoch?
    private var date: (year: Int, month: Int, day: Int)
    private var lastSecondsOfDay: Double?
    private var sawRMCDate = false
    /// The kinds of sentence (``Epoch/kinds``) the last epoch reported had, and the kind its
    /// last sentence was (the receiver's end of cycle).
    private var previousKinds: UInt8?
    private var previousLastKind: UInt8 = 0

    /// What is known about one UTC time's fix so far.
    private struct Epoch {
        let timeField: String
        let secondsOfDay: Double
        var latitude: Double?
        var longitude: Double?
        var altitude: Double?
        var speed: Double?
        var course: Double?
        var hdop: Double?
        var hasRMC = false
        var hasGGA = false
        var date: (year: Int, month: Int, day: Int)?
        /// The kinds of sentence read for it: 1 `RMC`, 2 `GGA`, 4 `GLL`; and the last one's.
        var kinds: UInt8 = 0
        var lastKind: UInt8 = 0
    }

    /// - Parameter today: seconds since the epoch whose UTC date GGA-only logs take.
    init(today: Double) {
        date = CivilTime.date(ofEpochSeconds: today)
    }

    /// Feeds one line (with or without its line ending); returns the fixes it completes.
    mutating func feed(_ line: String) -> [LocationFix] {
        guard let fields = Self.checkedFields(line) else {
            if !line.allSatisfy(\.isWhitespace) { rejected += 1 }
            return []
        }
        let kind = fields[0].suffix(3)
        guard fields[0].count == 5, kind == "RMC" || kind == "GGA" || kind == "GLL" else { return [] }
        // GLL puts its time after the position; the others first. A sentence cut short has no
        // time field at all (`$GPRMC*4B`): it is refused just below, never read past its end.
        let timePosition = kind == "GLL" ? 5 : 1
        let timeField = fields.count > timePosition ? fields[timePosition] : ""
        guard fields.count >= (kind == "GLL" ? 7 : 10), let secondsOfDay = Self.timeOfDay(timeField) else {
            rejected += 1
            return []
        }
        var completed: [LocationFix] = []
        if let current = epoch, current.timeField != timeField {
            completed += flush()
        }
        if epoch == nil { epoch = Epoch(timeField: String(timeField), secondsOfDay: secondsOfDay) }
        // Invariant: set just above.
        var current = epoch!
        let read = switch kind {
        case "RMC": Self.readRMC(fields, into: &current)
        case "GGA": Self.readGGA(fields, into: &current)
        default: Self.readGLL(fields, into: &current)
        }
        guard read else {
            rejected += 1
            return completed
        }
        accepted += 1
        current.lastKind = kind == "RMC" ? 1 : kind == "GGA" ? 2 : 4
        current.kinds |= current.lastKind
        epoch = current
        let complete = previousKinds.map { current.kinds & $0 == $0 } ?? (current.hasRMC && current.hasGGA)
        if complete { completed += flush() }
        return completed
    }

    /// Reports the fix still being gathered, if it has a position and is not cut short: the
    /// recording ended before it had the kinds of sentence the epoch before it had, and without
    /// the sentence that ended that epoch (as gpsd, which reports at the end of a cycle).
    mutating func finish() -> [LocationFix] {
        if let current = epoch, let previous = previousKinds, current.kinds & previous != previous,
           current.kinds & previousLastKind == 0 {
            epoch = nil
            return []
        }
        return flush()
    }

    private mutating func flush() -> [LocationFix] {
        guard let current = epoch else { return [] }
        epoch = nil
        previousKinds = current.kinds
        previousLastKind = current.lastKind
        if let rmcDate = current.date {
            date = rmcDate
            sawRMCDate = true
        } else if !sawRMCDate, let last = lastSecondsOfDay, current.secondsOfDay < last {
            let next = CivilTime.seconds(year: date.year, month: date.month, day: date.day, secondsOfDay: 86_400)
            date = CivilTime.date(ofEpochSeconds: next)
        }
        lastSecondsOfDay = current.secondsOfDay
        guard let latitude = current.latitude, let longitude = current.longitude else { return [] }
        let time = CivilTime.seconds(year: date.year, month: date.month, day: date.day, secondsOfDay: current.secondsOfDay)
        let fix = LocationFix(latitude: latitude, longitude: longitude, altitude: current.altitude, speed: current.speed,
                              course: current.course, accuracy: current.hdop.map { $0 * 5 }, time: time, provider: "nmea")
        return fix.isValid ? [fix] : []
    }

    // MARK: Sentences

    /// The comma-separated fields of a sentence whose checksum is right (the talker and type
    /// first), or nil.
    static func checkedFields(_ line: String) -> [Substring]? {
        var text = Substring(line)
        while let last = text.last, last == "\r" || last == "\n" || last == " " { text.removeLast() }
        if let dollar = text.lastIndex(of: "$") { text = text[dollar...] }
        guard text.first == "$", let star = text.lastIndex(of: "*") else { return nil }
        let body = text[text.index(after: text.startIndex)..<star]
        let digits = text[text.index(after: star)...]
        guard digits.count == 2, let expected = UInt8(digits, radix: 16) else { return nil }
        let sum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
        guard sum == expected, body.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return body.split(separator: ",", omittingEmptySubsequences: false)
    }

    private static func readRMC(_ fields: [Substring], into epoch: inout Epoch) -> Bool {
        if let date = Self.date(fields[9]) { epoch.date = date } else if !fields[9].isEmpty { return false }
        epoch.hasRMC = true
        // NMEA 2.3 adds a mode after the magnetic variation: N is no fix, S a simulator.
        guard fields[2] == "A", fields.count < 13 || !["N", "S"].contains(fields[12]) else { return true }
        guard let latitude = coordinate(fields[3], fields[4], degreeDigits: 2),
              let longitude = coordinate(fields[5], fields[6], degreeDigits: 3)
        else { return false }
        epoch.latitude = latitude
        epoch.longitude = longitude
        epoch.speed = Double(fields[7]).map { $0 * 1852 / 3600 } ?? epoch.speed
        epoch.course = Double(fields[8]) ?? epoch.course
        return true
    }

    private static func readGGA(_ fields: [Substring], into epoch: inout Epoch) -> Bool {
        epoch.hasGGA = true
        guard let quality = Int(fields[6]) else { return fields[6].isEmpty }
        // 0 is no fix and 8 a simulator: no position either way. Nor with fewer than 3
        // satellites in use (an empty count is none), as gpsd decides: receivers keep sending
        // their last position with quality 1 and 0 satellites after losing lock.
        guard quality > 0 && quality != 8, (Int(fields[7]) ?? 0) >= 3 else { return true }
        guard let latitude = coordinate(fields[2], fields[3], degreeDigits: 2),
              let longitude = coordinate(fields[4], fields[5], degreeDigits: 3)
        else { return false }
        epoch.latitude = latitude
        epoch.longitude = longitude
        epoch.hdop = Double(fields[8]) ?? epoch.hdop
        epoch.altitude = Double(fields[9]) ?? epoch.altitude
        return true
    }

    /// `GLL`: latitude, N/S, longitude, E/W, time, status (`A` valid) and, from NMEA 2.3, a mode.
    private static func readGLL(_ fields: [Substring], into epoch: inout Epoch) -> Bool {
        guard fields[6] == "A", fields.count < 8 || !["N", "S"].contains(fields[7]) else { return true }
        guard let latitude = coordinate(fields[1], fields[2], degreeDigits: 2),
              let longitude = coordinate(fields[3], fields[4], degreeDigits: 3)
        else { return false }
        epoch.latitude = latitude
        epoch.longitude = longitude
        return true
    }

    /// `hhmmss.ss` as seconds of the day.
    static func timeOfDay(_ field: Substring) -> Double? {
        guard field.count >= 6, let hours = Int(field.prefix(2)), let minutes = Int(field.dropFirst(2).prefix(2)),
              let seconds = Double(field.dropFirst(4)), hours < 24, minutes < 60, seconds < 61
        else { return nil }
        return Double(hours * 3600 + minutes * 60) + seconds
    }

    /// `ddmmyy` as a date (years 80–99 are 1980–1999).
    private static func date(_ field: Substring) -> (year: Int, month: Int, day: Int)? {
        guard field.count == 6, let value = Int(field) else { return nil }
        let day = value / 10_000, month = value / 100 % 100, year = value % 100
        let fullYear = year >= 80 ? 1900 + year : 2000 + year
        guard CivilTime.isValid(year: fullYear, month: month, day: day) else { return nil }
        return (fullYear, month, day)
    }

    /// `ddmm.mmmm` + `N`/`S` (or `dddmm.mmmm` + `E`/`W`) in signed degrees.
    private static func coordinate(_ field: Substring, _ hemisphere: Substring, degreeDigits: Int) -> Double? {
        guard field.count > degreeDigits + 2, let degrees = Int(field.prefix(degreeDigits)),
              let minutes = Double(field.dropFirst(degreeDigits)), minutes < 60
        else { return nil }
        let value = Double(degrees) + minutes / 60
        switch hemisphere {
        case "N", "E": return value
        case "S", "W": return -value
        default: return nil
        }
    }
}
