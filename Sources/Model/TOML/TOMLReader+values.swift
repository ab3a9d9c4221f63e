/// Strings, numbers, booleans and dates: the values that are one token.
extension TOMLReader {
    // MARK: Strings

    /// `"..."` (with escapes) or `'...'` (as written), on one line.
    mutating func singleLineString(literal: Bool) throws(TOMLError) -> String {
        let quote = literal ? UInt8(ascii: "'") : UInt8(ascii: "\"")
        at += 1
        // The bytes from `start` on are the string's as written until an escape; after one, the
        // string is built in `built`.
        let start = at
        var built: ByteBuffer?
        while true {
            guard let next = peek(), next != UInt8(ascii: "\n"), next != UInt8(ascii: "\r") else {
                throw fail("a string is not closed on its line (use \(literal ? "'''" : "\"\"\"") for a string of several lines)")
            }
            guard !Self.isControl(next) else { throw controlInString() }
            at += 1
            if next == quote {
                guard let built else { return string(start..<(at - 1)) }
                return built.string
            }
            if next == UInt8(ascii: "\\") && !literal {
                if built == nil {
                    var buffer = ByteBuffer()
                    for index in start..<(at - 1) { buffer.append(text[index]) }
                    built = buffer
                }
                built?.append(try escape())
                continue
            }
            built?.append(next)
        }
    }

    /// `"""..."""` (escapes, and a backslash at the end of a line joins it to the next) or
    /// `'''...'''` (as written). A line break right after the opening is not part of it; up to two
    /// quotes may stand right before the closing three.
    mutating func multilineString(literal: Bool) throws(TOMLError) -> String {
        let quote = literal ? UInt8(ascii: "'") : UInt8(ascii: "\"")
        let opened = line
        at += 3
        _ = skipLineBreak()
        var bytes = ByteBuffer()
        while true {
            guard let next = peek() else {
                throw TOMLError(line: opened, message: "a multi-line string is not closed (\(literal ? "'''" : "\"\"\"") is missing)")
            }
            if next == quote {
                var run = 0
                while peek(run) == quote { run += 1 }
                at += run
                guard run >= 3 else {
                    bytes.append(quote, count: run)
                    continue
                }
                guard run <= 5 else { throw fail("too many quotes close a multi-line string") }
                bytes.append(quote, count: run - 3)
                return bytes.string
            }
            if skipLineBreak() {
                bytes.append(UInt8(ascii: "\n"))
                continue
            }
            guard !Self.isControl(next) else { throw controlInString() }
            at += 1
            if next == UInt8(ascii: "\\") && !literal {
                if try skipEscapedLineBreak() { continue }
                bytes.append(try escape())
                continue
            }
            bytes.append(next)
        }
    }

    /// After a backslash in a multi-line basic string: when only blanks follow it on its line,
    /// skips them, the line break and all blanks and line breaks after it; true then.
    private mutating func skipEscapedLineBreak() throws(TOMLError) -> Bool {
        var ahead = 0
        while let next = peek(ahead), next == UInt8(ascii: " ") || next == UInt8(ascii: "\t") { ahead += 1 }
        guard peek(ahead) == UInt8(ascii: "\n") || (peek(ahead) == UInt8(ascii: "\r") && peek(ahead + 1) == UInt8(ascii: "\n")) else { return false }
        at += ahead
        while true {
            skipWhitespace()
            guard skipLineBreak() else { return true }
        }
    }

    /// The character an escape stands for; the backslash is read.
    private mutating func escape() throws(TOMLError) -> Unicode.Scalar {
        guard let letter = peek() else { throw fail("a string ends in the middle of an escape") }
        let letterAt = at
        func shownLetter() -> Substring { shown(at: letterAt).dropFirst().dropLast() }
        at += 1
        if let character = TextEscapes.shortEscape(letter) { return character }
        switch letter {
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = letter == UInt8(ascii: "u") ? 4 : 8
            var code: UInt32 = 0
            for _ in 0..<count {
                guard let digit = peek(), let value = TextEscapes.hexValue(digit) else {
                    throw fail("\\\(shownLetter()) must be followed by \(count) hexadecimal digits")
                }
                code = code << 4 | value
                at += 1
            }
            guard let scalar = Unicode.Scalar(code) else {
                throw fail("\\\(shownLetter())\(String(code, radix: 16, uppercase: true)) is not a Unicode scalar value")
            }
            return scalar
        default:
            throw fail("unknown escape \\\(shownLetter()) in a string (escapes: \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX)")
        }
    }

    /// The control character at `at`, refused.
    private func controlInString() -> TOMLError {
        fail("a string cannot hold the control character \(shownHere()); write it as an escape such as \\u0001")
    }

    // MARK: Other scalars

    /// A boolean, number, date or time: one token of letters, digits and `+-._:`, a date and a
    /// time being joined by `T` or one space.
    mutating func scalar() throws(TOMLError) -> Value {
        let start = at
        while let next = peek(), Self.isTokenScalar(next) { at += 1 }
        // `1979-05-27 07:32:00`: a space between a date and a time.
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        if at - start == 10, peek() == UInt8(ascii: " "), let hour = peek(1), let digit = peek(2), peek(3) == UInt8(ascii: ":"),
           digits.contains(hour), digits.contains(digit) {
            at += 1
            while let next = peek(), Self.isTokenScalar(next) { at += 1 }
        }
        guard at > start else { throw fail("expected a value, found \(shownHere())") }
        if let integer = plainInteger(start..<at) { return .integer(integer) }
        let first = text[start]
        let token = string(start..<at)
        switch token {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "inf", "+inf": return .number(.infinity)
        case "-inf": return .number(-.infinity)
        case "nan", "+nan", "-nan": return .number(.nan)
        default: break
        }
        if let date = TOMLDate.normalized(token) { return .string(date) }
        guard digits.contains(first) || first == UInt8(ascii: "+") || first == UInt8(ascii: "-") else {
            throw fail("expected a value, found \(TOMLNumber.excerpt(token)) "
                       + "(strings are quoted: \"text\"; values are strings, numbers, true, false, dates, [arrays] and { tables })")
        }
        do {
            return try TOMLNumber.parse(token)
        } catch {
            throw fail(error.message)
        }
    }

    /// The token in `range` when it is digits only, with no leading zero and too short to
    /// overflow (most numbers in a config file): such a token is neither a date nor a number
    /// the number reader would read otherwise.
    private func plainInteger(_ range: Range<Int>) -> Int64? {
        guard range.count <= 18, range.count == 1 || text[range.lowerBound] != UInt8(ascii: "0") else { return nil }
        var value: Int64 = 0
        for index in range {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
        }
        return value
    }

    private static func isTokenScalar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: ":"): true
        default: false
        }
    }
}
