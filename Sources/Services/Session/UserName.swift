import Foundation
import Model

/// The one form of a user name: what ``Session`` stores and compares.
///
/// Names that look alike must be one user, and a name must read as what it is: a name is put in
/// Unicode NFC (so `café` typed precomposed or with a combining accent is the same name), loses
/// leading and trailing whitespace, and is refused when it is empty, longer than ``maxLength``
/// characters, or holds a control or format character (zero-width characters, bidi controls),
/// which would make two different names print the same.
///
/// ```swift
/// try UserName.normalized(" cafe\u{301} ")   // "café" (NFC)
/// try UserName.normalized("ad\u{200B}min")   // throws invalid_argument, naming U+200B
/// ```
enum UserName {
    static let maxLength = 64

    /// `name` in its one form, or an `invalid_argument` error saying what is wrong with it.
    static func normalized(_ name: String) throws(ServiceError) -> String {
        let form = name.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !form.isEmpty else {
            throw ServiceError(.invalidArgument, "a name must have a character that is not a space")
        }
        guard form.count <= maxLength else {
            throw ServiceError(.invalidArgument, "a name must be 1 to \(maxLength) characters, got \(form.count)")
        }
        if let hidden = form.unicodeScalars.first(where: isHidden) {
            throw ServiceError(.invalidArgument, "a name cannot hold control or invisible formatting characters (found \(String(format: "U+%04X", hidden.value))): names that print alike must be one name")
        }
        return form
    }

    /// Control (Cc), format (Cf: zero-width and bidi controls), line and paragraph separators.
    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return true
        default: return false
        }
    }
}
