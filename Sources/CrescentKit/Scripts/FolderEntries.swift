#if canImport(Glibc)
import Glibc
#endif

/// The names in a folder, read with `readdir`: the one listing of plugin folders, a plugin's
/// files (for its declarations' stamp), remote sockets and completed paths.
enum FolderEntries {
    /// The names of the entries in the folder at `path`, without `.` and `..`, in the order the
    /// file system gives them; nil when the folder cannot be opened.
    static func names(in path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
