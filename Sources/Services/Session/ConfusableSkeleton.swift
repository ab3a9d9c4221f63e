import Foundation

/// The confusable skeleton of a string (Unicode Technical Standard #39, section 4): two strings
/// that look alike have the same skeleton, so `admin`, `аdmin` (Cyrillic а) and `ａdmin`
/// (fullwidth ａ) are one user name.
///
/// The skeleton is the string folded by compatibility (NFKD: every fullwidth, superscript or
/// mathematical form becomes its plain letter), each character replaced by its prototype from
/// Unicode's confusables.txt, decomposed again and stripped of combining marks (so `admi\u{307}n`,
/// an i with a second dot, is `admin`). It is a key for comparing, never shown: the prototype of
/// `m` is `rn`. Crescent ships the mappings of Latin, Greek, Cyrillic, fullwidth,
/// letterlike and mathematical characters (``table``, made by tools/confusables.py).
///
/// ```swift
/// ConfusableSkeleton.of("аdmin") == ConfusableSkeleton.of("admin")   // true
/// ```
enum ConfusableSkeleton {
    /// The skeleton of `text`.
    static func of(_ text: String) -> String {
        var mapped = String.UnicodeScalarView()
        for scalar in text.decomposedStringWithCompatibilityMapping.unicodeScalars {
            if let prototype = prototypes[scalar.value] {
                mapped.append(contentsOf: prototype)
            } else {
                mapped.append(scalar)
            }
        }
        var skeleton = String.UnicodeScalarView()
        for scalar in String(mapped).decomposedStringWithCompatibilityMapping.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark: continue   // marks do not tell look-alikes apart
            default: skeleton.append(scalar)
            }
        }
        return String(skeleton)
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
