/// The dates feeds write, as seconds since the Unix epoch.
///
/// RSS asks for RFC 822 (`Sat, 15 Jun 2024 12:00:00 GMT`), Atom and JSON Feed for RFC 3339
/// (`2024-06-15T12:00:00Z`); real feeds mix them up and bend both, so either field is read with
/// both grammars, leniently:
/// - RFC 822 with or without the weekday, full or abbreviated month and day names, 2-digit
///   years (`00`–`49` are 20xx, `50`–`99` 19xx), missing seconds, numeric zones with or without a
///   colon, and named zones (`GMT`, `UT`, `UTC`, `Z`, US zones such as `EST` and `PDT`, and a
///   few common others); a missing or unknown zone is UTC.
/// - RFC 3339 with or without a fraction or a zone (a missing zone is UTC), a space for the `T`,
///   minutes without seconds, or a date alone (midnight UTC).
///
/// Anything else is nil: an item without a date rather than a feed that fails.
enum FeedDate {
    /// The seconds since the epoch that `text` names, or nil.
    static func parse(_ text: String) -> Double? {
        let trimmed = HTMLText.trimmed(text)
        guard !trimmed.isEmpty else { return nil }
        if let first = trimmed.first, first.isNumber, let seconds = parseRFC3339(trimmed) { return seconds }
        return parseRFC822(trimmed) ?? parseRFC3339(trimmed)
    }

    // MARK: RFC 3339

    /// `YYYY-MM-DD[(T| )HH:MM[:SS[.fff]][Z|±HH[:]MM]]`.
    static func parseRFC3339(_ text: String) -> Double? {
        if let seconds = CivilTime.parseISO8601(text) { return seconds }
        // What CivilTime's strict reader refuses: a date alone, or a time without seconds.
        let parts = text.split(whereSeparator: { $0 == "T" || $0 == "t" || $0 == " " }).map(String.init)
        let date = parts.first?.split(separator: "-").compactMap { Int($0) } ?? []
        guard date.count == 3, CivilTime.isValid(year: date[0], month: date[1], day: date[2]), date[0] >= 1000 else { return nil }
        if parts.count == 1 { return CivilTime.seconds(year: date[0], month: date[1], day: date[2], secondsOfDay: 0) }
        guard parts.count == 2 else { return nil }
        // Insert ":00" seconds after HH:MM and try again.
        let time = parts[1]
        guard time.count >= 5, time.dropFirst(2).first == ":" else { return nil }
        let hourMinute = time.prefix(5)
        let zone = time.dropFirst(5)
        guard zone.first != ":" else { return nil }
        return CivilTime.parseISO8601("\(parts[0])T\(hourMinute):00\(zone)")
    }

    // MARK: RFC 822

    /// `[Day,] DD Mon YYYY HH:MM[:SS] [zone]`, leniently (see the type's summary).
    static func parseRFC822(_ text: String) -> Double? {
        var words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map { String($0) }
        // The weekday, if any, says nothing the date does not.
        if let first = words.first, first.first?.isLetter == true, month(first) == nil { words.removeFirst() }
        guard words.count >= 3 else { return nil }
        // "15 Jun 2024" and, in some feeds, "Jun 15 2024".
        var dayWord = words[0], monthWord = words[1]
        if month(dayWord) != nil { swap(&dayWord, &monthWord) }
        guard let day = Int(dayWord), (1...31).contains(day), let month = month(monthWord),
              var year = Int(words[2]), (0...9999).contains(year) else { return nil }
        if words[2].count <= 2 { year += year < 50 ? 2000 : 1900 }
        guard CivilTime.isValid(year: year, month: month, day: day) else { return nil }
        var secondsOfDay = 0.0
        var offset = 0
        if words.count >= 4 {
            let clock = words[3].split(separator: ":").map { Double($0) }
            guard clock.count >= 2, clock.count <= 3, clock.allSatisfy({ $0 != nil }) else { return nil }
            let hour = clock[0] ?? 0, minute = clock[1] ?? 0, second = clock.count == 3 ? clock[2] ?? 0 : 0
            guard hour < 24, minute < 60, second <= 60 else { return nil }
            secondsOfDay = hour * 3600 + minute * 60 + second
            if words.count >= 5 { offset = zoneOffset(words[4]) ?? 0 }
        }
        return CivilTime.seconds(year: year, month: month, day: day, secondsOfDay: secondsOfDay) - Double(offset)
    }

    /// 1 to 12 for an English month name or its first three letters, any case.
    private static func month(_ word: String) -> Int? {
        let letters = word.hasSuffix(".") ? word.dropLast() : Substring(word)
        guard letters.count >= 3, letters.allSatisfy(\.isLetter) else { return nil }
        return months.firstIndex(of: letters.prefix(3).lowercased()).map { $0 + 1 }
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Seconds east of UTC for `+0200`, `-05:30`, `GMT`, `EST` …; nil when unknown.
    static func zoneOffset(_ word: String) -> Int? {
        if let sign = word.first, sign == "+" || sign == "-" {
            let digits = word.dropFirst().filter { $0 != ":" }
            guard digits.count == 4 || digits.count == 2, let number = Int(digits) else { return nil }
            let hours = digits.count == 4 ? number / 100 : number, minutes = digits.count == 4 ? number % 100 : 0
            guard hours <= 14, minutes < 60 else { return nil }
            return (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
        }
        return namedZones[word.uppercased()].map { $0 * 3600 }
    }

    /// RFC 822's zones and the abbreviations feeds use most, in hours east of UTC.
    private static let namedZones: [String: Int] = [
        "GMT": 0, "UT": 0, "UTC": 0, "Z": 0, "WET": 0, "BST": 1, "CET": 1, "CEST": 2, "EET": 2, "EEST": 3,
        "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
        "AKST": -9, "AKDT": -8, "HST": -10, "JST": 9, "KST": 9, "AEST": 10, "AEDT": 11,
    ]
}
