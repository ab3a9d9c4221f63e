package import Glibc
import Model

/// Folders through the C library (the Services target does not use Foundation): the one
/// `mkdir -p` of the store's database, a plugin's data and records and new plugin skeletons, and
/// the one listing of plugin folders, a plugin's files (for its declarations' stamp), remote
/// sockets and completed paths.
package enum Folders {
    /// `path` split at its last slash: the folder ("" for a bare name, "/" at the root) and the
    /// name after it. By hand: Foundation's `deletingLastPathComponent` traps on a
    /// one-character path ("x") on Linux.
    package static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        return (folder, String(path[path.index(after: slash)...]))
    }

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

    /// The names of the entries in the folder at `path`, without `.` and `..`, in the order the
    /// file system gives them; nil when the folder cannot be opened.
    package static func names(in path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = String(decoding: DirectoryEntry.name(entry), as: UTF8.self)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
