package import Glibc

/// Making folders with the C library (the Services target does not use Foundation): the one
/// `mkdir -p` of the store's database, a plugin's data and records, and new plugin skeletons.
package enum Folders {
    /// Makes `path` and the folders above it that are missing, each with `mode` (an existing one
    /// is left as it is). Returns the first folder that could not be made and the `errno` why,
    /// nil when all exist now.
    @discardableResult
    package static func make(_ path: String, mode: mode_t) -> (folder: String, errno: Int32)? {
        var prefix = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            // A String of its own: `String + Substring` is a generic operator, whose first use
            // costs the runtime a scan of every protocol conformance in the binary.
            prefix += (prefix.isEmpty && !path.hasPrefix("/") ? "" : "/") + String(component)
            if mkdir(prefix, mode) != 0 && errno != EEXIST { return (prefix, errno) }
        }
        return nil
    }
}
