/// Dates and times without Foundation: UTC calendar dates to seconds since the Unix epoch, and
/// ISO 8601 timestamps (`2024-06-15T12:00:00.5Z`, `2024-06-15T14:00:00+02:00`) as gpsd and GPX
/// write them.
enum CivilTime {
    /// The years dates are computed for: what a file or a server writes is outside input, and
    /// the day arithmetic below must not overflow for a year of twenty digits.
    static let years = -1_000_000...1_000_000

    /// Days from 1970-01-01 to the given proleptic Gregorian date (H. Hinnant's algorithm); a
    /// year, month or day out of range is clamped into it.
    static func days(year: Int, month: Int, day: Int) -> Int {
        let year = min(max(year, years.lowerBound), years.upperBound)
        let month = min(max(month, 1), 12), day = min(max(day, 1), 31)
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Whether the date exists: day 1 to the month's last (February 29 in leap years only), so
    /// `2020-02-30` is refused instead of rolling over into March.
    static func isValid(year: Int, month: Int, day: Int) -> Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[month - 1]
    }

    /// Seconds since the epoch for a UTC date and a time of day in seconds.
    static func seconds(year: Int, month: Int, day: Int, secondsOfDay: Double) -> Double {
        Double(days(year: year, month: month, day: day)) * 86_400 + secondsOfDay
    }

    /// The UTC date (year, month, day) of `seconds` since the epoch (clamped to ``years``; NaN
    /// reads as the epoch).
    static func date(ofEpochSeconds seconds: Double) -> (year: Int, month: Int, day: Int) {
        let limit = 366.0 * Double(years.upperBound)
        let days = seconds.isNaN ? 0 : min(max((seconds / 86_400).rounded(.down), -limit), limit)
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Parses an ISO 8601 date-time (`YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`; a missing zone is UTC).
    static func parseISO8601(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        var position = 0
        func number(_ digits: Int) -> Int? {
            guard position + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[position..<position + digits] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            position += digits
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard position < bytes.count, characters.utf8.contains(bytes[position]) else { return false }
            position += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
              let second = number(2), isValid(year: year, month: month, day: day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var fraction = 0.0
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") || bytes[position] == UInt8(ascii: ",") {
            position += 1
            var scale = 0.1
            while position < bytes.count, (0x30...0x39).contains(bytes[position]) {
                fraction += Double(bytes[position] - 0x30) * scale
                scale /= 10
                position += 1
            }
        }
        var offset = 0
        if position < bytes.count {
            if expect("Zz") {
                // UTC
            } else if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                let sign = bytes[position] == UInt8(ascii: "-") ? -1 : 1
                position += 1
                guard let hours = number(2) else { return nil }
                _ = expect(":")
                let minutes = number(2) ?? 0
                offset = sign * (hours * 3600 + minutes * 60)
            }
            guard position == bytes.count else { return nil }
        }
        let secondsOfDay = Double(hour * 3600 + minute * 60 + second) + fraction
        return seconds(year: year, month: month, day: day, secondsOfDay: secondsOfDay) - Double(offset)
    }
}
