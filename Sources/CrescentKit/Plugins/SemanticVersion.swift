/// A `major.minor.patch[-pre.release][+build]` version (Semantic Versioning 2.0.0) and the
/// ranges plugins state the host versions they work with (`>=0.2.0, <1.0.0`).
///
/// Precedence is semver's: the numbers, then a version with a pre-release is lower than the same
/// version without (`1.0.0-rc.1 < 1.0.0`), and pre-releases compare identifier by identifier
/// (numeric ones as numbers and below alphanumeric ones, a shorter list below a longer one it
/// starts). Build metadata is ignored.
struct SemanticVersion: Comparable, CustomStringConvertible, Sendable {
    let major: Int
    let minor: Int
    let patch: Int
    /// The pre-release identifiers as written (`rc.1`), empty for a release.
    let preRelease: Substring

    /// Parses `1.2.3`, `1.2.3-rc.1`, `1.2.3+build.5`; nil for anything else (a number with a
    /// leading zero, `01.0.0`; an empty or malformed pre-release identifier, a numeric one with a
    /// leading zero).
    init?(_ text: String) {
        self.init(text[...])
    }

    /// Parses a version as the initializer from a string does.
    init?(_ text: Substring) {
        // Read byte by byte, into no array: every plugin's manifest has two versions to check at
        // start-up. An index walk rather than `utf8.indices`: the runtime builds that view's
        // index type on first use by scanning every protocol conformance in the binary, which
        // cost more than the rest of reading a manifest.
        var parts = (0, 0, 0)
        var part = 0
        var digits = 0
        let bytes = text.utf8
        var coreEnd = bytes.endIndex
        var next = bytes.startIndex
        while next < bytes.endIndex {
            let index = next
            next = bytes.index(after: index)
            let byte = bytes[index]
            if byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") {
                coreEnd = index
                break
            }
            if byte == UInt8(ascii: ".") {
                guard digits > 0, part < 2 else { return nil }
                part += 1
                digits = 0
                continue
            }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let value = part == 0 ? parts.0 : part == 1 ? parts.1 : parts.2
            // `01.0.0`: semver forbids leading zeros in the numbers.
            guard digits == 0 || value != 0 else { return nil }
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
        var preRelease = text[coreEnd..<coreEnd]
        if coreEnd < text.utf8.endIndex {
            var rest = text[coreEnd...]
            if rest.utf8.first == UInt8(ascii: "-") {
                rest = rest.dropFirst()
                let end = rest.utf8.firstIndex(of: UInt8(ascii: "+")) ?? rest.utf8.endIndex
                preRelease = rest[..<end]
                guard Self.validIdentifiers(preRelease, strictNumbers: true) else { return nil }
                rest = rest[end...]
            }
            if !rest.isEmpty {
                // `+build`: dot-separated identifiers; leading zeros are allowed there.
                guard rest.utf8.first == UInt8(ascii: "+"), Self.validIdentifiers(rest.dropFirst(), strictNumbers: false) else { return nil }
            }
        }
        major = parts.0
        minor = parts.1
        patch = parts.2
        self.preRelease = preRelease
    }

    /// True when `text` is dot-separated non-empty identifiers of `[0-9A-Za-z-]` (numeric ones
    /// without leading zeros when `strictNumbers`).
    private static func validIdentifiers(_ text: Substring, strictNumbers: Bool) -> Bool {
        guard !text.isEmpty else { return false }
        for identifier in text.split(separator: ".", omittingEmptySubsequences: false) {
            guard !identifier.isEmpty else { return false }
            var numeric = true
            for byte in identifier.utf8 {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): break
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "-"): numeric = false
                default: return false
                }
            }
            if strictNumbers, numeric, identifier.utf8.count > 1, identifier.utf8.first == UInt8(ascii: "0") { return false }
        }
        return true
    }

    var isPreRelease: Bool { !preRelease.isEmpty }

    /// True when both have the same `major.minor.patch`.
    func hasSameCore(as other: SemanticVersion) -> Bool {
        (major, minor, patch) == (other.major, other.minor, other.patch)
    }

    var description: String { "\(major).\(minor).\(patch)" + (isPreRelease ? "-\(preRelease)" : "") }

    static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        if !lhs.hasSameCore(as: rhs) { return (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch) }
        switch (lhs.isPreRelease, rhs.isPreRelease) {
        case (false, _): return false
        case (true, false): return true
        case (true, true): return precedes(lhs.preRelease, rhs.preRelease)
        }
    }

    /// Semver's order of two pre-releases, identifier by identifier.
    private static func precedes(_ lhs: Substring, _ rhs: Substring) -> Bool {
        let left = lhs.split(separator: "."), right = rhs.split(separator: ".")
        for (a, b) in zip(left, right) where a != b {
            switch (Int(a), Int(b)) {
            case let (x?, y?): return x < y
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
            }
        }
        return left.count < right.count
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
    ///
    /// A pre-release (`0.3.0-rc.1`) satisfies a range only when one of its comparisons names a
    /// pre-release of the same `major.minor.patch` (`>=0.3.0-rc.0`), as npm's ranges rule: a
    /// range that names only releases is not met by the pre-releases between them.
    func contains(_ version: SemanticVersion) -> Bool {
        var holds = true
        var preReleaseAllowed = !version.isPreRelease
        // Never throws: `init` read the same text.
        try? Self.forEachTerm(of: text) { op, bound in
            if bound.isPreRelease, bound.hasSameCore(as: version) { preReleaseAllowed = true }
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
        return holds && preReleaseAllowed
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
                throw RangeError(message: "'\(term)' is not a comparison like >=0.2.0 (a version is major.minor.patch, with an optional -pre.release)")
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
