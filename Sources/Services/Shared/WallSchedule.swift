public import Foundation
public import Model

/// A wall-clock schedule in a time zone: daily at a time (`timer.at("09:30")`) or a five-field
/// cron expression (`timer.cron("*/5 8-18 * * 1-5")`), and the next instant it is due.
///
/// Cron fields are minute (0-59), hour (0-23), day of month (1-31), month (1-12 or `jan`-`dec`)
/// and day of week (0-7, 0 and 7 are Sunday, or `sun`-`sat`); each is `*`, a value, a range
/// `a-b`, any of these with a step (`*/5`, `8-18/2`, `5/15`), or a list of them (`1,15,30`).
/// `@hourly`, `@daily`, `@weekly`, `@monthly` and `@yearly` stand for their usual expressions.
/// As in Vixie cron, when both day fields are restricted a day matching either is due.
///
/// Daylight saving follows the zone's rules: a time that does not exist on a day (02:30 when the
/// clocks go from 02:00 to 03:00) is due once, at the change; a time that happens twice (01:30
/// when they go back) is due once, the first time.
///
/// ```swift
/// let weekdays = try WallSchedule(cron: "30 9 * * mon-fri", zone: "Europe/Paris")
/// let next = weekdays.next(after: clock.wallTime)    // seconds since 1970, UTC
/// ```
public struct WallSchedule: Sendable, CustomStringConvertible {
    let minutes: [Int]
    let hours: [Int]
    let second: Int
    private let daysOfMonth: Set<Int>
    private let months: Set<Int>
    private let daysOfWeek: Set<Int>
    /// Whether each day field was `*` (for the Vixie rule).
    private let anyDayOfMonth: Bool
    private let anyDayOfWeek: Bool
    public let zone: TimeZone
    /// The zone as the script named it (Foundation calls "UTC" "GMT"), or the system's.
    public let zoneName: String
    /// How the script wrote it (`at 09:30`, `cron */5 8-18 * * 1-5`), with the zone.
    public let description: String

    /// Daily at `time`, `HH:MM` or `HH:MM:SS` (24-hour clock).
    public init(at time: String, zone name: String? = nil) throws(ServiceError) {
        let parts = time.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, let hour = Int(parts[0]), let minute = Int(parts[1]),
              parts.allSatisfy({ $0.count == 2 || ($0.count == 1 && $0 == parts[0]) }),
              (0...23).contains(hour), (0...59).contains(minute) else {
            throw ServiceError(.invalidArgument, "'\(clipped(time, limit: 40))' is not a time of day: use \"HH:MM\" or \"HH:MM:SS\" on a 24-hour clock, such as \"09:30\"")
        }
        var second = 0
        if parts.count == 3 {
            guard let value = Int(parts[2]), (0...59).contains(value) else {
                throw ServiceError(.invalidArgument, "'\(clipped(time, limit: 40))' has no valid seconds: use 00 to 59")
            }
            second = value
        }
        (zone, zoneName) = try Self.zone(name)
        minutes = [minute]
        hours = [hour]
        self.second = second
        daysOfMonth = Set(1...31)
        months = Set(1...12)
        daysOfWeek = Set(0...6)
        anyDayOfMonth = true
        anyDayOfWeek = true
        description = "at \(time) \(zoneName)"
    }

    /// At the times a five-field cron expression names.
    public init(cron expression: String, zone name: String? = nil) throws(ServiceError) {
        let macros = ["@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
                      "@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *"]
        let trimmed = expression.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed.hasPrefix("@"), macros[trimmed] == nil {
            // A misspelled name (`@hourli`) was counted as a one-field expression.
            let names = ["@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"]
            let listing = NameSuggestion.listing("names", names, suggesting: NameSuggestion.closest(to: trimmed, among: names))
            throw ServiceError(.invalidArgument, "'\(visible(expression, limit: 60))' is not a schedule's name (\(listing))")
        }
        let text = macros[trimmed] ?? expression
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count == 5 else {
            throw ServiceError(.invalidArgument, "'\(visible(expression, limit: 60))' has \(fields.count) field\(fields.count == 1 ? "" : "s"); a cron expression has five: minute hour day-of-month month day-of-week, such as \"*/5 8-18 * * 1-5\"")
        }
        minutes = try Self.field(fields[0], "minute", 0...59).sorted()
        hours = try Self.field(fields[1], "hour", 0...23).sorted()
        daysOfMonth = try Self.field(fields[2], "day of month", 1...31)
        months = try Self.field(fields[3], "month", 1...12, names: Self.monthNames)
        // 7 is Sunday too.
        daysOfWeek = Set(try Self.field(fields[4], "day of week", 0...7, names: Self.dayNames).map { $0 % 7 })
        anyDayOfMonth = fields[2].hasPrefix("*")
        anyDayOfWeek = fields[4].hasPrefix("*")
        second = 0
        (zone, zoneName) = try Self.zone(name)
        description = "cron \(expression) \(zoneName)"
    }

    // MARK: The next instant

    /// The first instant after `now` (seconds since 1970, UTC) when it is due; nil when no day
    /// in the next 28 years matches (`0 0 30 2 *`: February has no 30th).
    public func next(after now: Double) -> Double? {
        let localNow = now + Double(zone.secondsFromGMT(for: Date(timeIntervalSince1970: now)))
        let today = Int((localNow / 86_400).rounded(.down))
        var best: Double?
        // Where the zone's offset does not change from the day before `now` to the day after the
        // next (UTC, fixed offsets, most of the year elsewhere), local times map to instants in
        // order: the first one after `now` found there is the answer, with no window of two hours
        // of candidates to weigh on either side of it.
        let steadyUntil = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: now - 86_400))?
            .timeIntervalSince1970 ?? .infinity
        // Steady through the day after `now`: no local time up to now's is due after `now`.
        let earliest = steadyUntil > now + 86_400 ? localNow : localNow - 7200
        // From the day before (an offset change can move a late local time past `now`) through
        // 28 years, the cycle of weekdays and leap years; the day after the first due day too.
        var lastDay = today + 28 * 366
        var day = earliest == localNow ? today : today - 1
        while day <= lastDay {
            if matches(day: day) {
                // Offsets change by at most a few hours: local times more than 2 h before now's
                // cannot be after it, and none more than 2 h after the best found can beat it.
                search: for hour in hours {
                    if Double(day * 86_400 + hour * 3600 + 3600) <= earliest { continue }
                    for minute in minutes {
                        let local = Double(day * 86_400 + hour * 3600 + minute * 60 + second)
                        if local < earliest { continue }
                        if let best, local - 7200 > best + (localNow - now) { break search }
                        if let instant = instant(ofLocal: local), instant > now, best.map({ instant < $0 }) ?? true {
                            best = instant
                            if instant + 86_400 < steadyUntil { return instant }
                        }
                    }
                }
                if best != nil { lastDay = min(lastDay, day + 1) }
            }
            day += 1
        }
        return best
    }

    private func matches(day: Int) -> Bool {
        let date = CivilTime.date(ofEpochSeconds: Double(day) * 86_400)
        guard months.contains(date.month) else { return false }
        // 1970-01-01 was a Thursday (4).
        let weekday = ((day % 7) + 7 + 4) % 7
        let dayOfMonth = daysOfMonth.contains(date.day), dayOfWeek = daysOfWeek.contains(weekday)
        if anyDayOfMonth || anyDayOfWeek { return dayOfMonth && dayOfWeek }
        return dayOfMonth || dayOfWeek
    }

    /// The UTC instant of a local time (seconds since 1970 as if the zone were UTC): the first
    /// one when it happens twice, the change itself when the clocks skip it.
    private func instant(ofLocal local: Double) -> Double? {
        let before = Double(zone.secondsFromGMT(for: Date(timeIntervalSince1970: local - 86_400)))
        let after = Double(zone.secondsFromGMT(for: Date(timeIntervalSince1970: local + 86_400)))
        let candidates = Set([local - before, local - after]).filter { instant in
            Double(zone.secondsFromGMT(for: Date(timeIntervalSince1970: instant))) == local - instant
        }
        if let first = candidates.min() { return first }
        // Skipped: due at the change, the first instant whose local time is past it.
        let change = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: local - before - 86_400))
        return change?.timeIntervalSince1970
    }

    // MARK: Parsing

    static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// The zone and its name as the script or `TZ` gave it (Foundation names UTC "GMT").
    private static func zone(_ name: String?) throws(ServiceError) -> (TimeZone, String) {
        guard let name else { return try localZone() }
        // NUL is refused wherever a name goes to the system; Foundation ignored it and after.
        guard !name.utf8.contains(0) else {
            throw ServiceError(.invalidArgument, "zone '\(visible(name, limit: 40))' contains a NUL character (\\0): give a name such as \"Europe/Paris\"")
        }
        // Foundation reads "GMT+2" as UTC+2, while the IANA "Etc/GMT+2" is UTC-2 (POSIX's sign):
        // one of the two readings is always the surprise.
        let upper = name.uppercased()
        if ["GMT+", "GMT-", "UTC+", "UTC-"].contains(where: { upper.hasPrefix($0) }) {
            throw ServiceError(.invalidArgument, "zone '\(clipped(name, limit: 40))' is ambiguous (in IANA's Etc/GMT+2 the sign is reversed: UTC-2): use a place such as \"Europe/Paris\", or \"UTC\"")
        }
        guard let zone = TimeZone(identifier: name) else {
            // The zone it most likely misspells (`Europe/Pari`, `utc`): a case slip first.
            let known = TimeZone.knownTimeZoneIdentifiers + ["UTC"]
            let meant = known.first { $0.lowercased() == name.lowercased() }
                ?? (name.count <= 64 ? NameSuggestion.closest(to: name, among: known, prefixes: false) : nil)
            throw ServiceError(.invalidArgument, "zone '\(clipped(name, limit: 40))' is not an IANA time zone: "
                + (meant.map { "did you mean \"\($0)\"?" } ?? "use a name such as \"Europe/Paris\", \"America/New_York\" or \"UTC\""))
        }
        return (zone, name)
    }

    /// The local zone, read from `TZ` as the C library reads it (so schedules agree with
    /// `os.date`): a name (`Europe/Paris`), the same after a colon (`:Europe/Paris`), or a zone
    /// file's path (`/usr/share/zoneinfo/Asia/Tokyo`), all of which Foundation took for UTC
    /// unless it was a bare name. A POSIX rule (`JST-9`) was taken as UTC too: a fixed offset is
    /// used as such, and a rule with daylight saving (`CET-1CEST,M3.5.0,M10.5.0/3`), which this
    /// cannot follow, is an error asking for a zone, as is a value that is neither.
    private static func localZone() throws(ServiceError) -> (TimeZone, String) {
        guard let value = getenv("TZ").map({ String(cString: $0) }), !value.isEmpty else {
            return (TimeZone.current, TimeZone.current.identifier)
        }
        let rule = value.hasPrefix(":") ? String(value.dropFirst()) : value
        if let zone = TimeZone(identifier: rule) { return (zone, rule) }
        if rule.hasPrefix("/") {
            let zone = try zone(file: rule, given: value)
            return (zone, zone.identifier)
        }
        // A POSIX rule's sign is reversed (`JST-9` is UTC+9): named by its offset, GMT+0900.
        if let offset = fixedOffset(rule), let zone = TimeZone(secondsFromGMT: offset) { return (zone, zone.identifier) }
        if isRuleWithDaylightSaving(rule) {
            throw ServiceError(.invalidArgument, "TZ '\(visible(value, limit: 40))' is not an IANA time zone but a POSIX rule with daylight saving, which schedules cannot follow: give { zone = \"Europe/Paris\" } (or set TZ to such a name)")
        }
        throw ServiceError(.invalidArgument, "TZ '\(visible(value, limit: 40))' is neither an IANA time zone nor a POSIX rule (the C library reads it as UTC): set TZ to a name such as Europe/Paris, or give { zone = \"Europe/Paris\" }")
    }

    /// The zone a `TZ` holding a zone file's path names: the name after `zoneinfo/` in the path
    /// or, through symbolic links, in the file it leads to (as /etc/localtime does).
    private static func zone(file path: String, given value: String) throws(ServiceError) -> TimeZone {
        var candidates = [path]
        if let real = realpath(path, nil) {
            candidates.append(String(cString: real))
            free(real)
        }
        for candidate in candidates {
            if let range = candidate.range(of: "zoneinfo/", options: .backwards),
               let zone = TimeZone(identifier: String(candidate[range.upperBound...])) { return zone }
        }
        throw ServiceError(.invalidArgument, "TZ '\(visible(value, limit: 60))' is not a zone file under a zoneinfo folder, so schedules cannot tell its zone: set TZ to a name such as Europe/Paris, or give { zone = \"Europe/Paris\" }")
    }

    /// Whether `rule` reads as a POSIX `TZ` with daylight saving: a name (three letters or
    /// more, or `<...>`), an offset, then a second name.
    private static func isRuleWithDaylightSaving(_ rule: String) -> Bool {
        var rest = Substring(rule)
        func name() -> Bool {
            if rest.hasPrefix("<") {
                guard let close = rest.firstIndex(of: ">") else { return false }
                rest = rest[rest.index(after: close)...]
                return true
            }
            let letters = rest.prefix { $0.isASCII && $0.isLetter }
            rest = rest.dropFirst(letters.count)
            return letters.count >= 3
        }
        guard name() else { return false }
        if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
        let offset = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ":") }
        guard offset.first?.isNumber == true else { return false }
        rest = rest.dropFirst(offset.count)
        return name()
    }

    /// The offset east of UTC, in seconds, of a POSIX `TZ` without daylight saving (`JST-9`,
    /// `<+0530>-5:30`, `UTC0`): its sign is west-positive. Nil for anything else.
    private static func fixedOffset(_ rule: String) -> Int? {
        var rest = Substring(rule)
        if rest.hasPrefix("<") {
            guard let close = rest.firstIndex(of: ">") else { return nil }
            rest = rest[rest.index(after: close)...]
        } else {
            let letters = rest.prefix { $0.isASCII && $0.isLetter }
            guard letters.count >= 3 else { return nil }
            rest = rest.dropFirst(letters.count)
        }
        var sign = 1
        if rest.first == "+" || rest.first == "-" {
            sign = rest.first == "-" ? -1 : 1
            rest = rest.dropFirst()
        }
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var seconds = 0
        for (index, part) in parts.enumerated() {
            guard let value = number(part), part.count <= 2 else { return nil }
            seconds += value * [3600, 60, 1][index]
        }
        guard seconds <= 24 * 3600 else { return nil }
        return -sign * seconds
    }

    /// The values one cron field names, each in `range`.
    private static func field(_ text: Substring, _ name: String, _ range: ClosedRange<Int>, names: [String] = []) throws(ServiceError) -> Set<Int> {
        var values = Set<Int>()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { throw problem(text, name, range, "'\(visible(item, limit: 40))' has two steps") }
            var step = 1
            if parts.count == 2 {
                guard let given = number(parts[1]), given > 0 else { throw problem(text, name, range, "the step in '\(visible(item, limit: 40))' must be a whole number above 0") }
                step = given
            }
            let span: ClosedRange<Int>
            if parts[0] == "*" {
                span = range
            } else {
                let ends = parts[0].split(separator: "-", omittingEmptySubsequences: false)
                guard ends.count <= 2 else { throw problem(text, name, range, "'\(visible(item, limit: 40))' is not a value or a range a-b") }
                // `-1`, `5-`: a minus with nothing on one side is a number out of range, not ''.
                if ends.count == 2, ends.contains(where: \.isEmpty) {
                    throw problem(text, name, range, "'\(visible(parts[0], limit: 40))' is not a number in \(range.lowerBound)-\(range.upperBound) or a range a-b")
                }
                let low = try value(ends[0], text, name, range, names)
                // `5/15`: from 5 to the end, every 15.
                let high = ends.count == 2 ? try value(ends[1], text, name, range, names) : (parts.count == 2 ? range.upperBound : low)
                guard low <= high else { throw problem(text, name, range, "the range '\(visible(parts[0], limit: 40))' goes backwards") }
                span = low...high
            }
            values.formUnion(stride(from: span.lowerBound, through: span.upperBound, by: step))
        }
        return values
    }

    private static func value(_ text: Substring, _ field: Substring, _ name: String, _ range: ClosedRange<Int>, _ names: [String]) throws(ServiceError) -> Int {
        if let index = names.firstIndex(of: text.lowercased()) { return index + (range.lowerBound == 1 ? 1 : 0) }
        guard let number = number(text), range.contains(number) else {
            let words = names.isEmpty ? "" : " or a name (\(names.first ?? "")-\(names.last ?? ""))"
            // A misspelled name (`fry`, `agu`) gets the name it is closest to, as `@hourli` does;
            // a whole one (`monday`, `january`) the three letters cron takes.
            let lower = String(text.prefix(16)).lowercased()
            let closest = names.isEmpty || number(text) != nil ? nil
                : names.first { lower.hasPrefix($0) } ?? NameSuggestion.closest(to: lower, among: names, prefixes: false)
            let suggestion = closest.map { "; did you mean '\($0)'?" } ?? ""
            throw problem(field, name, range, "'\(visible(text, limit: 40))' is not a number in \(range.lowerBound)-\(range.upperBound)\(words)\(suggestion)")
        }
        return number
    }

    /// `text` as a number when it is only ASCII digits (`Int` also takes `+5`, which cron does not).
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(text)
    }

    private static func problem(_ field: Substring, _ name: String, _ range: ClosedRange<Int>, _ why: String) -> ServiceError {
        ServiceError(.invalidArgument, "the \(name) field '\(visible(field, limit: 40))' is not valid: \(why)")
    }
}
