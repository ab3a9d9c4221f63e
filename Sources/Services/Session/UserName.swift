import Foundation
import Model

/// The one form of a user name: what ``Session`` stores and compares.
///
/// Names that look alike must be one user, and a name must read as what it is: a name is put in
/// Unicode NFC (so `café` typed precomposed or with a combining accent is the same name), loses
/// leading and trailing whitespace, and is refused when it is empty, longer than ``maxLength``
/// characters or ``maxBytes`` bytes (one character may carry any number of combining marks), or
/// holds a control, format or default-ignorable character (zero-width characters, bidi controls,
/// variation selectors, Hangul fillers), which would make two different names print the same. A name that only looks like one already registered
/// (`аdmin` with a Cyrillic а, `ａdmin` fullwidth) is taken: ``lookalike(of:among:)`` compares
/// confusable skeletons (``ConfusableSkeleton``).
///
/// ```swift
/// try UserName.normalized(" cafe\u{301} ")   // "café" (NFC)
/// try UserName.normalized("ad\u{200B}min")   // throws invalid_argument, naming U+200B
/// ```
enum UserName {
    static let maxLength = 64
    /// Bytes of UTF-8 a name may take: four per character, as the longest letters take.
    static let maxBytes = 4 * maxLength

    /// `name` in its one form, or an `invalid_argument` error saying what is wrong with it.
    static func normalized(_ name: String) throws(ServiceError) -> String {
        // Checked before normalizing too, so that a megabyte of combining marks costs nothing.
        guard name.utf8.count <= 4 * maxBytes else { throw tooLong(name.utf8.count) }
        let form = name.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !form.isEmpty else {
            throw ServiceError(.invalidArgument, "a name must have a character that is not a space")
        }
        guard form.utf8.count <= maxBytes else { throw tooLong(form.utf8.count) }
        guard form.count <= maxLength else {
            throw ServiceError(.invalidArgument, "a name must be 1 to \(maxLength) characters, got \(form.count)")
        }
        if let hidden = form.unicodeScalars.first(where: isHidden) {
            throw ServiceError(.invalidArgument, "a name cannot hold control or invisible formatting characters (found \(String(format: "U+%04X", hidden.value))): names that print alike must be one name")
        }
        return form
    }

    private static func tooLong(_ bytes: Int) -> ServiceError {
        ServiceError(.invalidArgument, "a name must be at most \(maxBytes) bytes of UTF-8 (and \(maxLength) characters), got \(bytes) bytes")
    }

    /// The first of `names` that looks like `name` (the same confusable skeleton), itself included.
    static func lookalike(of name: String, among names: some Sequence<String>) -> String? {
        let skeleton = ConfusableSkeleton.of(name)
        return names.first { $0 == name || ConfusableSkeleton.of($0) == skeleton }
    }

    /// The text of a name or password argument: invalid UTF-8 is named as such (a script's
    /// string of other bytes arrives as bytes).
    static func text(_ value: Value, _ what: String) throws(ServiceError) -> String {
        switch value {
        case .string(let text): return text
        case .bytes: throw ServiceError(.invalidArgument, "\(what) is not valid UTF-8 text")
        default: return ""
        }
    }

    /// Control (Cc), format (Cf: zero-width and bidi controls), line and paragraph separators,
    /// and every default-ignorable code point (variation selectors, the combining grapheme
    /// joiner, Mongolian free variation selectors, Hangul fillers), which print as nothing.
    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isDefaultIgnorableCodePoint { return true }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return true
        default: return false
        }
    }
}
