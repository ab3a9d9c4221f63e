import Glibc

/// A shell pattern for file names (`*.lua`, `src/*.c`, `[ab]?.txt`): without a `/` it matches a
/// name alone, with one the path below the watched or listed folder (where `*` also crosses `/`).
struct PathGlob: Sendable {
    let pattern: String

    /// Whether `relativePath` (below the folder) matches.
    func matches(_ relativePath: String) -> Bool {
        matches(FilePath(relativePath))
    }

    /// Whether `relativePath` (below the folder) matches, as its bytes (a name need not be UTF-8).
    func matches(_ relativePath: FilePath) -> Bool {
        let tested = pattern.contains("/") ? relativePath : relativePath.split.name
        return tested.withCString { fnmatch(pattern, $0, 0) } == 0
    }
}
