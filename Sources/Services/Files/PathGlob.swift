import Glibc
import Model

/// A shell pattern for file names (`*.lua`, `src/*.c`, `[ab]?.txt`, `src/**/*.lua`): without a
/// `/` it matches a name alone, with one the path below the watched or listed folder, a part
/// between slashes at a time, as .gitignore and watchexec read it: `*`, `?` and `[...]` stay
/// within one folder's name, and a part that is `**` stands for any number of folders (none
/// included), so `**/*.lua` matches `a.lua` and `src/sub/b.lua`.
struct PathGlob: Sendable {
    let pattern: String
    /// The pattern's parts between slashes, when it has a slash.
    private let parts: [String]?

    /// The pattern checked: an empty one, a `[` without its `]`, and a part that is `.` or `..`
    /// (no path below the folder has one) are `invalid_argument` naming it.
    init(_ pattern: String) throws(ServiceError) {
        guard !pattern.isEmpty else {
            throw ServiceError(.invalidArgument, "glob is empty: give a pattern such as \"*.lua\", or leave it out for every name")
        }
        if let problem = Self.problem(in: pattern) {
            throw ServiceError(.invalidArgument, "glob '\(clipped(pattern, limit: 60))' \(problem)")
        }
        self.pattern = pattern
        parts = pattern.contains("/") ? pattern.split(separator: "/", omittingEmptySubsequences: false).map(String.init) : nil
        if let parts, parts.contains(where: { $0 == "." || $0 == ".." }) {
            throw ServiceError(.invalidArgument, "glob '\(clipped(pattern, limit: 60))' has a '.' or '..' part, but it matches paths below the folder: write them from there, as in \"src/*.lua\"")
        }
    }

    /// Why `pattern` is malformed, or nil: an unclosed `[` (fnmatch took it for a literal `[`,
    /// so the pattern quietly matched nothing).
    private static func problem(in pattern: String) -> String? {
        var characters = Array(pattern)[...]
        while let character = characters.popFirst() {
            switch character {
            case "\\":
                _ = characters.popFirst()
            case "[":
                // `[]...]` and `[!]...]` hold a `]` as their first member.
                if characters.first == "!" || characters.first == "^" { characters = characters.dropFirst() }
                if characters.first == "]" { characters = characters.dropFirst() }
                guard let close = characters.firstIndex(of: "]") else {
                    return "has a '[' without its ']': close the set, as in \"[ab]*.lua\", or write \"\\\\[\" for the character itself"
                }
                characters = characters[characters.index(after: close)...]
            default:
                break
            }
        }
        return nil
    }

    /// Whether `relativePath` (below the folder) matches.
    func matches(_ relativePath: String) -> Bool {
        matches(FilePath(relativePath))
    }

    /// Whether `relativePath` (below the folder) matches, as its bytes (a name need not be UTF-8).
    func matches(_ relativePath: FilePath) -> Bool {
        guard let parts else { return relativePath.split.name.withCString { fnmatch(pattern, $0, 0) } == 0 }
        let names = relativePath.bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { FilePath(bytes: $0) }
        return Self.matches(parts[...], names[...])
    }

    /// Whether the pattern's `parts` match the path's `names`, `**` standing for any run of them.
    private static func matches(_ parts: ArraySlice<String>, _ names: ArraySlice<FilePath>) -> Bool {
        guard let part = parts.first else { return names.isEmpty }
        if part == "**" {
            // Consecutive `**` are one; then try each number of folders it stands for.
            let rest = parts.dropFirst()
            for skipped in 0...names.count where matches(rest, names.dropFirst(skipped)) { return true }
            return false
        }
        guard let name = names.first, name.withCString({ fnmatch(part, $0, 0) }) == 0 else { return false }
        return matches(parts.dropFirst(), names.dropFirst())
    }
}
