import Foundation

/// The confusable skeleton of a string (Unicode Technical Standard #39, section 4): two strings
/// that look alike have the same skeleton, so `admin`, `аdmin` (Cyrillic а) and `ａdmin`
/// (fullwidth ａ) are one user name.
///
/// The skeleton is the string decomposed (NFD), each character replaced by its prototype from
/// Unicode's confusables.txt, and decomposed again. It is a key for comparing, never shown: the
/// prototype of `m` is `rn`. Crescent ships the mappings of Latin, Greek, Cyrillic, fullwidth,
/// letterlike and mathematical characters (``table``, made by tools/confusables.py).
///
/// ```swift
/// ConfusableSkeleton.of("аdmin") == ConfusableSkeleton.of("admin")   // true
/// ```
enum ConfusableSkeleton {
    /// The skeleton of `text`.
    static func of(_ text: String) -> String {
        var mapped = String.UnicodeScalarView()
        for scalar in text.decomposedStringWithCanonicalMapping.unicodeScalars {
            if let prototype = prototypes[scalar.value] {
                mapped.append(contentsOf: prototype)
            } else {
                mapped.append(scalar)
            }
        }
        return String(mapped).decomposedStringWithCanonicalMapping
    }

    /// ``table`` read once: each source scalar's prototype.
    private static let prototypes: [UInt32: [Unicode.Scalar]] = {
        var prototypes: [UInt32: [Unicode.Scalar]] = [:]
        for entry in table.split(whereSeparator: { $0 == "," || $0.isNewline }) {
            let parts = entry.trimmingCharacters(in: .whitespaces).split(separator: ":")
            guard parts.count == 2, let source = UInt32(parts[0], radix: 16) else { continue }
            let target = parts[1].split(separator: " ").compactMap { UInt32($0, radix: 16).flatMap(Unicode.Scalar.init) }
            prototypes[source] = target
        }
        return prototypes
    }()
}
