/// Strings, numbers, booleans and dates: the values that are one token.
extension TOMLReader {
    // MARK: Strings

    /// `"..."` (with escapes) or `'...'` (as written), on one line.
    mutating func singleLineString(literal: Bool) throws(TOMLError) -> String {
        let quote: Unicode.Scalar = literal ? "'" : "\""
        at += 1
        var scalars = ScalarBuffer()
        while true {
            guard let next = peek(), next != "\n", next != "\r" else {
                throw fail("a string is not closed on its line (use \(String(repeating: String(quote), count: 3)) for a string of several lines)")
            }
            at += 1
            if next == quote { return scalars.string }
            if next == "\\" && !literal {
                scalars.append(try escape())
                continue
            }
            guard !Self.isControl(next) else { throw controlInString(next) }
            scalars.append(next)
        }
    }

    /// `"""..."""` (escapes, and a backslash at the end of a line joins it to the next) or
    /// `'''...'''` (as written). A line break right after the opening is not part of it; up to two
    /// quotes may stand right before the closing three.
    mutating func multilineString(literal: Bool) throws(TOMLError) -> String {
        let quote: Unicode.Scalar = literal ? "'" : "\""
        let opened = line
        at += 3
        _ = skipLineBreak()
        var scalars = ScalarBuffer()
        while true {
            guard let next = peek() else {
                throw TOMLError(line: opened, message: "a multi-line string is not closed (\(String(repeating: String(quote), count: 3)) is missing)")
            }
            if next == quote {
                var run = 0
                while peek(run) == quote { run += 1 }
                at += run
                guard run >= 3 else {
                    scalars.append(quote, count: run)
                    continue
                }
                guard run <= 5 else { throw fail("too many quotes close a multi-line string") }
                scalars.append(quote, count: run - 3)
                return scalars.string
            }
            if skipLineBreak() {
                scalars.append("\n")
                continue
            }
            at += 1
            if next == "\\" && !literal {
                if try skipEscapedLineBreak() { continue }
                scalars.append(try escape())
                continue
            }
            guard !Self.isControl(next) else { throw controlInString(next) }
            scalars.append(next)
        }
    }

    /// After a backslash in a multi-line basic string: when only blanks follow it on its line,
    /// skips them, the line break and all blanks and line breaks after it; true then.
    private mutating func skipEscapedLineBreak() throws(TOMLError) -> Bool {
        var ahead = 0
        while let next = peek(ahead), next == " " || next == "\t" { ahead += 1 }
        guard peek(ahead) == "\n" || (peek(ahead) == "\r" && peek(ahead + 1) == "\n") else { return false }
        at += ahead
        while true {
            skipWhitespace()
            guard skipLineBreak() else { return true }
        }
    }

    /// The character an escape stands for; the backslash is read.
    private mutating func escape() throws(TOMLError) -> Unicode.Scalar {
        guard let letter = peek() else { throw fail("a string ends in the middle of an escape") }
        at += 1
        switch letter {
        case "b": return "\u{8}"
        case "t": return "\t"
        case "n": return "\n"
        case "f": return "\u{C}"
        case "r": return "\r"
        case "\"": return "\""
        case "\\": return "\\"
        case "u", "U":
            let count = letter == "u" ? 4 : 8
            var code: UInt32 = 0
            for _ in 0..<count {
                guard let digit = peek(), let value = Self.hexValue(digit) else {
                    throw fail("\\\(letter) must be followed by \(count) hexadecimal digits")
                }
                code = code << 4 | value
                at += 1
            }
            guard let scalar = Unicode.Scalar(code) else {
                throw fail("\\\(letter)\(String(code, radix: 16, uppercase: true)) is not a Unicode scalar value")
            }
            return scalar
        default:
            throw fail("unknown escape \\\(Self.shown(letter).dropFirst().dropLast()) in a string (escapes: \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX)")
        }
    }

    private func controlInString(_ scalar: Unicode.Scalar) -> TOMLError {
        fail("a string cannot hold the control character \(Self.shown(scalar)); write it as an escape such as \\u0001")
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt32? {
        switch scalar {
        case "0"..."9": scalar.value - 0x30
        case "a"..."f": scalar.value - 0x61 + 10
        case "A"..."F": scalar.value - 0x41 + 10
        default: nil
        }
    }

    // MARK: Other scalars

    /// A boolean, number, date or time: one token of letters, digits and `+-._:`, a date and a
    /// time being joined by `T` or one space.
    mutating func scalar() throws(TOMLError) -> Value {
        let start = at
        while let next = peek(), Self.isTokenScalar(next) { at += 1 }
        // `1979-05-27 07:32:00`: a space between a date and a time.
        if at - start == 10, peek() == " ", let hour = peek(1), let digit = peek(2), peek(3) == ":",
           ("0"..."9").contains(hour), ("0"..."9").contains(digit) {
            at += 1
            while let next = peek(), Self.isTokenScalar(next) { at += 1 }
        }
        let token = string(start..<at)
        guard !token.isEmpty, let first = token.unicodeScalars.first else {
            throw fail("expected a value, found \(peek().map(Self.shown) ?? "the end of the file")")
        }
        switch token {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "inf", "+inf": return .number(.infinity)
        case "-inf": return .number(-.infinity)
        case "nan", "+nan", "-nan": return .number(.nan)
        default: break
        }
        if let date = TOMLDate.normalized(token) { return .string(date) }
        guard ("0"..."9").contains(first) || first == "+" || first == "-" else {
            throw fail("expected a value, found \(TOMLNumber.excerpt(token)) "
                       + "(strings are quoted: \"text\"; values are strings, numbers, true, false, dates, [arrays] and { tables })")
        }
        do {
            return try TOMLNumber.parse(token)
        } catch {
            throw fail(error.message)
        }
    }

    private static func isTokenScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-", "+", ".", ":": true
        default: false
        }
    }
}
