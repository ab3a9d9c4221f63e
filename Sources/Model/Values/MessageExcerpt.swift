/// Outside text quoted in a message: a value a script, a file or a server sent can be megabytes
/// long, and an error message echoes only its start.
///
/// ```swift
/// throw ServiceError(.invalidArgument, "unknown key '\(clipped(key))'")
/// ```
///
/// - Parameter limit: the characters kept; longer text keeps that many and says how much was cut.
public func clipped(_ text: some StringProtocol, limit: Int = 80) -> String {
    guard text.count > limit else { return String(text) }
    return "\(text.prefix(limit))… (\(text.utf8.count) bytes)"
}

/// Outside text quoted in a message with its control characters written as escapes (`\0`,
/// `\t`, `\n`, `\r`, `\u{1B}`), so a NUL or an escape sequence shows as what it is rather than
/// as a space or a change of the terminal's colours; clipped like ``clipped(_:limit:)``.
///
/// ```swift
/// throw ServiceError(.invalidArgument, "the minute field '\(visible(field))' is not valid")
/// ```
public func visible(_ text: some StringProtocol, limit: Int = 80) -> String {
    var shown = ""
    for scalar in clipped(text, limit: limit).unicodeScalars {
        switch scalar {
        case "\0": shown += "\\0"
        case "\t": shown += "\\t"
        case "\n": shown += "\\n"
        case "\r": shown += "\\r"
        case "\\": shown += "\\\\"
        case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
            shown += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        default: shown.unicodeScalars.append(scalar)
        }
    }
    return shown
}
