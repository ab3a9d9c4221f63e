/// A `major.minor.patch` version and the ranges plugins state the host versions they work with
/// (`>=0.2.0, <1.0.0`).
struct SemanticVersion: Comparable, CustomStringConvertible, Sendable {
    let major: Int
    let minor: Int
    let patch: Int

    /// Parses `1.2.3` (a pre-release or build suffix after `-` or `+` is ignored); nil otherwise.
    init?(_ text: String) {
        self.init(text[...])
    }

    /// Parses `1.2.3` as the initializer from a string does.
    init?(_ text: Substring) {
        // Read byte by byte, into no array: every plugin's manifest has two versions to check at
        // start-up.
        var parts = (0, 0, 0)
        var part = 0
        var digits = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") { break }
            if byte == UInt8(ascii: ".") {
                guard digits > 0, part < 2 else { return nil }
                part += 1
                digits = 0
                continue
            }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let value = part == 0 ? parts.0 : part == 1 ? parts.1 : parts.2
            let (tens, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowedAgain) = tens.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflowed, !overflowedAgain else { return nil }
            switch part {
            case 0: parts.0 = sum
            case 1: parts.1 = sum
            default: parts.2 = sum
            }
            digits += 1
        }
        guard part == 2, digits > 0 else { return nil }
        major = parts.0
        minor = parts.1
        patch = parts.2
    }

    var description: String { "\(major).\(minor).\(patch)" }

    static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }
}

/// Comma-separated comparisons that must all hold: `>=0.2.0, <1.0.0`, `=1.0.0`, `^0.3.0`.
///
/// Kept as written and read again by ``contains(_:)``: reading it takes no allocation, where
/// keeping its terms in an array made the runtime build that array's type at start-up.
struct VersionRange: Sendable {
    private enum Operator {
        case atLeast, atMost, above, below, exactly, caret
    }

    private let text: String

    /// Parses a range; a bare version means exactly that version.
    init(_ text: String) throws(RangeError) {
        var terms = 0
        try Self.forEachTerm(of: text) { _, _ in terms += 1 }
        guard terms > 0 else { throw RangeError(message: "the range is empty; write e.g. \">=0.1.0, <1.0.0\"") }
        self.text = text
    }

    struct RangeError: Error { let message: String }

    /// True when `version` satisfies every comparison.
    func contains(_ version: SemanticVersion) -> Bool {
        var holds = true
        // Never throws: `init` read the same text.
        try? Self.forEachTerm(of: text) { op, bound in
            switch op {
            case .atLeast: holds = holds && version >= bound
            case .atMost: holds = holds && version <= bound
            case .above: holds = holds && version > bound
            case .below: holds = holds && version < bound
            case .exactly: holds = holds && version == bound
            case .caret:
                holds = holds && version >= bound && (bound.major > 0 ? version.major == bound.major
                                                                      : version.major == 0 && version.minor == bound.minor)
            }
        }
        return holds
    }

    /// Calls `body` with each comparison of `text` in order (empty parts between commas are
    /// skipped); the first one that is not a comparison throws.
    private static func forEachTerm(of text: String, _ body: (Operator, SemanticVersion) -> Void) throws(RangeError) {
        let utf8 = text.utf8
        var start = utf8.startIndex
        while start < utf8.endIndex {
            var end = start
            while end < utf8.endIndex, utf8[end] != UInt8(ascii: ",") { end = utf8.index(after: end) }
            defer { start = end < utf8.endIndex ? utf8.index(after: end) : end }
            guard end > start else { continue }
            let term = text[start..<end].trimmingSpacesAndTabs
            let bytes = term.utf8
            let second = bytes.count > 1 ? bytes[bytes.index(after: bytes.startIndex)] : nil
            let (op, length): (Operator, Int) = switch bytes.first {
            case UInt8(ascii: ">"): second == UInt8(ascii: "=") ? (.atLeast, 2) : (.above, 1)
            case UInt8(ascii: "<"): second == UInt8(ascii: "=") ? (.atMost, 2) : (.below, 1)
            case UInt8(ascii: "="): (.exactly, 1)
            case UInt8(ascii: "^"): (.caret, 1)
            default: (.exactly, 0)
            }
            let versionText = term[bytes.index(bytes.startIndex, offsetBy: length)...].trimmingSpacesAndTabs
            guard let version = SemanticVersion(versionText) else {
                throw RangeError(message: "'\(term)' is not a comparison like >=0.2.0 (a version is major.minor.patch)")
            }
            body(op, version)
        }
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs, read byte by byte.
    fileprivate var trimmingSpacesAndTabs: Substring {
        let bytes = utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while start < end, isBlank(bytes[start]) { start = bytes.index(after: start) }
        while end > start, isBlank(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return self[start..<end]
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        // Index walks rather than `drop(while:).reversed()`: the runtime builds the metadata of
        // those wrapper types on first use by scanning every protocol conformance in the binary,
        // which made reading the plugin manifests the larger part of their start-up cost.
        func isSpace(_ character: Character) -> Bool { character == " " || character == "\t" }
        var start = startIndex
        var end = endIndex
        while start < end, isSpace(self[start]) { start = index(after: start) }
        while end > start, isSpace(self[index(before: end)]) { end = index(before: end) }
        return String(self[start..<end])
    }
}

extension String {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String { self[...].trimmingSpaces }
}
