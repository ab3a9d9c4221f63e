import Glibc

/// A shell pattern for file names (`*.lua`, `src/*.c`, `[ab]?.txt`): without a `/` it matches a
/// name alone, with one the path below the watched or listed folder (where `*` also crosses `/`).
struct PathGlob: Sendable {
    let pattern: String

    /// Whether `relativePath` (below the folder) matches.
    func matches(_ relativePath: String) -> Bool {
        if pattern.contains("/") { return fnmatch(pattern, relativePath, 0) == 0 }
        let name = relativePath.split(separator: "/").last.map(String.init) ?? relativePath
        return fnmatch(pattern, name, 0) == 0
    }
}
