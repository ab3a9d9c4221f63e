/// Folds text for matching place names: lower case, without diacritics (`Zürich` → `zurich`,
/// `Łódź` → `lodz`, `Straße` → `strasse`), hyphens, underscores and every kind of space or line end
/// as spaces, runs of spaces as one, a byte order mark and zero-width characters dropped.
///
/// The Latin letters with diacritics (U+00C0–U+024F, U+1E00–U+1EFF) map to their base letters
/// through the tables below, generated from Unicode's decompositions (NFKD without combining
/// marks, plus the letters that have none: ø, ł, đ, þ, ß, æ, œ); other combining marks are dropped
/// and other letters only lower-cased. `tools/geonames/make_geocoder_data.py` folds the data file's
/// alternate names the same way.
package enum TextFolding {
    /// The folded form of `text`.
    package static func fold(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            let folded = fold(scalar)
            if folded == " " {
                pendingSpace = !result.isEmpty
                continue
            }
            if folded.isEmpty { continue }
            if pendingSpace { result.append(" ") }
            pendingSpace = false
            result += folded
        }
        return result
    }

    private static func fold(_ scalar: Unicode.Scalar) -> String {
        let value = scalar.value
        switch value {
        case 0x41...0x5A: return String(Unicode.Scalar(UInt8(value + 0x20)))
        // Spaces, line ends (a name read from a CRLF file ends in "\r"), hyphens and underscores.
        case 0x09...0x0D, 0x20, 0x2D, 0x5F, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2010...0x2015,
             0x2028, 0x2029, 0x202F, 0x205F, 0x3000: return " "
        // A byte order mark and the zero-width characters are invisible: dropped.
        case 0x200B...0x200D, 0x2060, 0xFEFF: return ""
        case 0x2018, 0x2019, 0x02BC: return "'"
        case 0..<0x80: return String(scalar)
        case 0xC0..<0x250: return mapped(latin1AndExtended[Int(value - 0xC0)], scalar)
        case 0x1E00..<0x1F00: return mapped(latinAdditional[Int(value - 0x1E00)], scalar)
        default:
            if scalar.properties.generalCategory == .nonspacingMark { return "" }
            return scalar.properties.lowercaseMapping
        }
    }

    private static func mapped(_ replacement: Substring, _ scalar: Unicode.Scalar) -> String {
        replacement == "." ? scalar.properties.lowercaseMapping : String(replacement)
    }

    /// U+00C0–U+024F, one token per code point; `.` keeps the letter (lower-cased).
    private static let latin1AndExtended: [Substring] = """
        a a a a a a ae c e e e e i i i i d n o o o o o . o u u u u y th ss a a a a a a ae c e e e e
        i i i i d n o o o o o . o u u u u y th y a a a a a a c c c c c c c c d d d d e e e e e e e
        e e e g g g g g g g g h h h h i i i i i i i i i i ij ij j j k k k l l l l l l l l l l n n n
        n n n n n n o o o o o o oe oe r r r r r r s s s s s s s s t t t t t t u u u u u u u u u u u
        u w w y y y z z z z z z s b . . . . . . . . d . . . . . . . . . . . . . i . . . . . . . . o
        o . . . . . . . . . . . . . u u . . . . z z . . . . . . . . . . . . . dz dz dz lj lj lj nj
        nj nj a a i i o o u u u u u u u u u u . a a a a . . g g g g k k o o o o . . j dz dz dz g g
        . . n n a a . . . . a a a a e e e e i i i i o o o o r r r r u u u u s s t t . . h h . . . .
        . . a a e e o o o o o o o o y y . . . . . . . . . . . . . . . b . . . . . . . . . . . .
        """.split(whereSeparator: \.isWhitespace)

    /// U+1E00–U+1EFF (Latin Extended Additional, Vietnamese), as above.
    private static let latinAdditional: [Substring] = """
        a a b b b b b b c c d d d d d d d d d d e e e e e e e e e e f f g g h h h h h h h h h h i i
        i i k k k k k k l l l l l l l l m m m m m m n n n n n n n n o o o o o o o o p p p p r r r r
        r r r r s s s s s s s s s s t t t t t t t t u u u u u u u u u u v v v v w w w w w w w w w w
        x x x x y y z z z z z z h t w y . s . . . . a a a a a a a a a a a a a a a a a a a a a a a a
        e e e e e e e e e e e e e e e e i i i i o o o o o o o o o o o o o o o o o o o o o o o o u u
        u u u u u u u u u u u u y y y y y y y y . . . . . .
        """.split(whereSeparator: \.isWhitespace)
}
