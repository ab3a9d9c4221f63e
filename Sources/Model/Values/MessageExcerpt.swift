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
        case _ where isDisplayHazard(scalar):
            shown += escapeSequence(scalar)
        default: shown.unicodeScalars.append(scalar)
        }
    }
    return shown
}

/// True for a character that changes how a terminal shows the text around it rather than
/// showing itself: a control character (C0, DEL, C1: escape sequences, carriage returns) or a
/// bidirectional override or isolate (U+202E shows what follows backwards).
public func isDisplayHazard(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0..<0x20, 0x7F...0x9F, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
}

/// The first character of `text` that ``isDisplayHazard(_:)``, newlines and tabs aside when
/// `allowingLines` (a doc of several lines); nil when it shows as written.
public func displayHazard(in text: some StringProtocol, allowingLines: Bool = false) -> Unicode.Scalar? {
    text.unicodeScalars.first { isDisplayHazard($0) && !(allowingLines && ($0 == "\n" || $0 == "\t")) }
}

/// Text from outside (a plugin's docs) made safe to print: each character that
/// ``isDisplayHazard(_:)`` written as an escape, newlines and tabs kept; nothing clipped.
public func displayable(_ text: String) -> String {
    guard displayHazard(in: text, allowingLines: true) != nil else { return text }
    var shown = ""
    for scalar in text.unicodeScalars {
        if isDisplayHazard(scalar), scalar != "\n", scalar != "\t" {
            shown += escapeSequence(scalar)
        } else {
            shown.unicodeScalars.append(scalar)
        }
    }
    return shown
}

/// ``displayable(_:)`` that keeps plain colour sequences (SGR: `ESC [`, at most 32 digits, `;`
/// and `:`, then `m`), which only colour the text after them: a program's coloured output reads
/// as it did, and nothing else in it acts on the terminal (an `ESC [?1049h` in data, which put
/// the shell back on the alternate screen, shows as `\u{1B}[?1049h`). Text that set a colour and
/// did not reset it ends with a reset, so the colour stops with it.
public func displayableKeepingColours(_ text: String) -> String {
    guard displayHazard(in: text, allowingLines: true) != nil else { return text }
    let scalars = Array(text.unicodeScalars)
    var shown = String.UnicodeScalarView()
    var coloured = false
    var index = 0
    while index < scalars.count {
        let scalar = scalars[index]
        if scalar == "\u{1B}", let end = colourSequenceEnd(scalars, from: index) {
            shown.append(contentsOf: scalars[index...end])
            // A reset (`ESC [m`, `ESC [0m`) ends the colour; any other sets one.
            coloured = !scalars[(index + 2)..<end].allSatisfy { $0 == "0" }
            index = end + 1
            continue
        }
        if isDisplayHazard(scalar), scalar != "\n", scalar != "\t" {
            shown.append(contentsOf: escapeSequence(scalar).unicodeScalars)
        } else {
            shown.append(scalar)
        }
        index += 1
    }
    var result = String(shown)
    if coloured { result += "\u{1B}[0m" }
    return result
}

/// The index of the `m` that ends the SGR sequence whose ESC is at `start`, or nil when none
/// does there.
private func colourSequenceEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
    guard start + 2 < scalars.count, scalars[start + 1] == "[" else { return nil }
    var index = start + 2
    while index < scalars.count, index - start - 2 <= 32 {
        switch scalars[index] {
        case "m": return index
        case "0"..."9", ";", ":": index += 1
        default: return nil
        }
    }
    return nil
}

/// How text shown on a terminal writes a character that must not reach it raw: `\u{1B}` (Swift's
/// and Lua 5.4's spelling, so the shown text reads back as the character).
public func escapeSequence(_ scalar: Unicode.Scalar) -> String {
    "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
}

/// A character's code point as Unicode writes it: `U+001B`.
public func codePoint(_ scalar: Unicode.Scalar) -> String {
    let digits = String(scalar.value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
