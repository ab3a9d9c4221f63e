/// TOML's integers and floats: `+1_000`, `0xFF`, `0o17`, `0b101`, `6.02e23`, `-0.5`.
/// Underscores stand only between digits; a decimal integer has no leading zero; an integer
/// must fit 64 bits and a float must be finite (`inf` and `nan` are read as words).
enum TOMLNumber {
    static func parse(_ token: String) throws(TOMLTable.Problem) -> Value {
        let scalars = Array(token.unicodeScalars)
        if scalars.count > 2, scalars[0] == "0", let radix = radix(of: scalars[1]) {
            guard let digits = digits(scalars[2...], radix: radix),
                  let magnitude = UInt64(digits, radix: radix) else { throw invalid(token) }
            guard let integer = Int64(exactly: magnitude) else { throw outOfRange(token) }
            return .integer(integer)
        }
        let unsigned = scalars.first == "+" || scalars.first == "-" ? scalars.dropFirst() : scalars[...]
        let exponentAt = unsigned.firstIndex { $0 == "e" || $0 == "E" }
        let pointAt = unsigned.firstIndex(of: ".")
        let integerPart = unsigned[..<(pointAt ?? exponentAt ?? unsigned.endIndex)]
        guard let whole = digits(integerPart, radix: 10), whole == "0" || whole.first != "0" else { throw invalid(token) }
        var text = (scalars.first == "-" ? "-" : "") + whole
        if let pointAt {
            guard exponentAt.map({ $0 > pointAt }) ?? true,
                  let fraction = digits(unsigned[(pointAt + 1)..<(exponentAt ?? unsigned.endIndex)], radix: 10) else { throw invalid(token) }
            text += "." + fraction
        }
        if let exponentAt {
            var exponent = unsigned[(exponentAt + 1)...]
            let sign = exponent.first == "+" || exponent.first == "-" ? String(exponent.removeFirst()) : ""
            guard let power = digits(exponent, radix: 10) else { throw invalid(token) }
            text += "e" + sign + power
        }
        if pointAt == nil && exponentAt == nil {
            guard let integer = Int64(text) else { throw outOfRange(token) }
            return .integer(integer)
        }
        guard let float = Double(text), float.isFinite else { throw outOfRange(token) }
        return .number(float)
    }

    /// The digits of `scalars` without their underscores, when each underscore stands between
    /// two digits of `radix`; nil otherwise (or when there are none).
    private static func digits(_ scalars: ArraySlice<Unicode.Scalar>, radix: Int) -> String? {
        var result = String.UnicodeScalarView()
        var previousWasDigit = false
        for scalar in scalars {
            if scalar == "_" {
                guard previousWasDigit else { return nil }
                previousWasDigit = false
                continue
            }
            let value = ("0"..."9").contains(scalar) ? Int(scalar.value) - 0x30 : hexLetter(scalar)
            guard let value, value < radix else { return nil }
            result.append(scalar)
            previousWasDigit = true
        }
        return previousWasDigit ? String(result) : nil
    }

    private static func hexLetter(_ scalar: Unicode.Scalar) -> Int? {
        switch scalar {
        case "a"..."f": Int(scalar.value) - 0x61 + 10
        case "A"..."F": Int(scalar.value) - 0x41 + 10
        default: nil
        }
    }

    private static func radix(of scalar: Unicode.Scalar) -> Int? {
        switch scalar {
        case "x": 16
        case "o": 8
        case "b": 2
        default: nil
        }
    }

    private static func invalid(_ token: String) -> TOMLTable.Problem {
        TOMLTable.Problem(message: "'\(excerpt(token))' is not a valid number or date "
                          + "(numbers: 42, -1_000, 0xFF, 0o17, 0b101, 3.14, 6.02e23; dates: 1979-05-27T07:32:00Z)")
    }

    private static func outOfRange(_ token: String) -> TOMLTable.Problem {
        TOMLTable.Problem(message: "the number \(excerpt(token)) is out of range (integers fit 64 bits, floats must be finite)")
    }

    /// `token`, cut when long (messages never echo a huge value whole).
    static func excerpt(_ token: String) -> String {
        token.count > 40 ? String(token.prefix(40)) + "..." : token
    }
}
