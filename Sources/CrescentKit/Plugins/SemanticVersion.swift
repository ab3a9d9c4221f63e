/// A `major.minor.patch` version and the ranges plugins state the host versions they work with
/// (`>=0.2.0, <1.0.0`).
struct SemanticVersion: Comparable, CustomStringConvertible, Sendable {
    let major: Int
    let minor: Int
    let patch: Int

    /// Parses `1.2.3` (a pre-release or build suffix after `-` or `+` is ignored); nil otherwise.
    init?(_ text: String) {
        // Read byte by byte: every plugin's manifest has two versions to check at start-up.
        var parts = [0, 0, 0]
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
            let (tens, overflowed) = parts[part].multipliedReportingOverflow(by: 10)
            let (sum, overflowedAgain) = tens.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflowed, !overflowedAgain else { return nil }
            parts[part] = sum
            digits += 1
        }
        guard part == 2, digits > 0 else { return nil }
        major = parts[0]
        minor = parts[1]
        patch = parts[2]
    }

    var description: String { "\(major).\(minor).\(patch)" }

    static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }
}

/// Comma-separated comparisons that must all hold: `>=0.2.0, <1.0.0`, `=1.0.0`, `^0.3.0`.
struct VersionRange: Sendable {
    private enum Operator: String, CaseIterable {
        // Longest first, so `>=` is not read as `>`.
        case atLeast = ">=", atMost = "<=", above = ">", below = "<", exactly = "=", caret = "^"
    }

    private let terms: [(Operator, SemanticVersion)]

    /// Parses a range; a bare version means exactly that version.
    init(_ text: String) throws(RangeError) {
        var terms: [(Operator, SemanticVersion)] = []
        for raw in text.split(separator: ",") {
            let term = raw.trimmingSpaces
            let op = Operator.allCases.first { term.hasPrefix($0.rawValue) }
            let versionText = String(term.dropFirst(op?.rawValue.count ?? 0)).trimmingSpaces
            guard let version = SemanticVersion(versionText) else {
                throw RangeError(message: "'\(term)' is not a comparison like >=0.2.0 (a version is major.minor.patch)")
            }
            terms.append((op ?? .exactly, version))
        }
        guard !terms.isEmpty else { throw RangeError(message: "the range is empty; write e.g. \">=0.1.0, <1.0.0\"") }
        self.terms = terms
    }

    struct RangeError: Error { let message: String }

    /// True when `version` satisfies every comparison.
    func contains(_ version: SemanticVersion) -> Bool {
        terms.allSatisfy { op, bound in
            switch op {
            case .atLeast: version >= bound
            case .atMost: version <= bound
            case .above: version > bound
            case .below: version < bound
            case .exactly: version == bound
            case .caret:
                version >= bound && (bound.major > 0 ? version.major == bound.major
                                                     : version.major == 0 && version.minor == bound.minor)
            }
        }
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
