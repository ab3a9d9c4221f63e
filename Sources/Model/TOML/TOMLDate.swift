/// TOML's dates and times (RFC 3339): `1979-05-27T07:32:00Z`, `1979-05-27 07:32:00.5-07:00`,
/// `1979-05-27T07:32:00` (local), `1979-05-27`, `07:32:00`. They are kept as text, checked: a
/// real day of a real month, hours to 23, minutes to 59, seconds to 60 (a leap second).
enum TOMLDate {
    /// `token` in RFC 3339 form (`T` and `Z` upper case, `T` between date and time), or nil
    /// when it is no date or time.
    static func normalized(_ token: String) -> String? {
        let scalars = Array(token.unicodeScalars)
        if let end = time(scalars[...]), end == scalars.endIndex { return token }
        guard let dateEnd = date(scalars[...]) else { return nil }
        if dateEnd == scalars.endIndex { return token }
        guard ["T", "t", " "].contains(scalars[dateEnd]), var end = time(scalars[(dateEnd + 1)...]) else { return nil }
        if end < scalars.endIndex {
            if scalars[end] == "Z" || scalars[end] == "z" {
                end += 1
            } else {
                guard scalars[end] == "+" || scalars[end] == "-", let hours = number(scalars[...], at: end + 1, digits: 2),
                      scalars.count > end + 3, scalars[end + 3] == ":", let minutes = number(scalars[...], at: end + 4, digits: 2),
                      hours <= 23, minutes <= 59 else { return nil }
                end += 6
            }
        }
        guard end == scalars.endIndex else { return nil }
        var text = String.UnicodeScalarView(scalars)
        let separator = text.index(text.startIndex, offsetBy: dateEnd)
        text.replaceSubrange(separator...separator, with: CollectionOfOne("T"))
        return String(text).uppercased()
    }

    /// The end of `YYYY-MM-DD` at the start of `scalars`, when it is a real day.
    private static func date(_ scalars: ArraySlice<Unicode.Scalar>) -> Int? {
        let start = scalars.startIndex
        guard let year = number(scalars, at: start, digits: 4), scalars.count > 4, scalars[start + 4] == "-",
              let month = number(scalars, at: start + 5, digits: 2), scalars.count > 7, scalars[start + 7] == "-",
              let day = number(scalars, at: start + 8, digits: 2), (1...12).contains(month) else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day) ? start + 10 : nil
    }

    /// The end of `HH:MM:SS[.fraction]` at the start of `scalars`.
    private static func time(_ scalars: ArraySlice<Unicode.Scalar>) -> Int? {
        let start = scalars.startIndex
        guard let hour = number(scalars, at: start, digits: 2), scalars.count > 2, scalars[start + 2] == ":",
              let minute = number(scalars, at: start + 3, digits: 2), scalars.count > 5, scalars[start + 5] == ":",
              let second = number(scalars, at: start + 6, digits: 2), hour <= 23, minute <= 59, second <= 60 else { return nil }
        var end = start + 8
        if end < scalars.endIndex, scalars[end] == "." {
            end += 1
            let digits = end
            while end < scalars.endIndex, ("0"..."9").contains(scalars[end]) { end += 1 }
            guard end > digits else { return nil }
        }
        return end
    }

    /// The decimal number of exactly `digits` digits at `index`.
    private static func number(_ scalars: ArraySlice<Unicode.Scalar>, at index: Int, digits: Int) -> Int? {
        guard index >= scalars.startIndex, index + digits <= scalars.endIndex else { return nil }
        var value = 0
        for scalar in scalars[index..<(index + digits)] {
            guard ("0"..."9").contains(scalar) else { return nil }
            value = value * 10 + Int(scalar.value - 0x30)
        }
        return value
    }
}
