#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Model

/// A spec file: the path as the system names it (any bytes but NUL; a name need not be UTF-8)
/// and as the report shows it (each byte outside UTF-8 as `\xFF`). A name that is not UTF-8 was
/// read back through its lossy text, a U+FFFD that named no file, so its tests never ran.
struct SpecFile: Sendable, Equatable {
    /// The path's bytes, for opening it.
    let path: [UInt8]
    /// The path in reports, messages and the chunk name of its code.
    let shown: String

    init(path: [UInt8]) {
        self.path = path
        shown = ByteText.shown(path)
    }

    init(_ path: String) { self.init(path: Array(path.utf8)) }

    /// The `*_spec.lua` files under `folder`, sorted by their bytes, as busted finds them: hidden
    /// files and folders (a name starting with `.`, such as an editor's `.#x_spec.lua` lock link)
    /// are left out, and linked folders are followed, each real folder once (a link back up ends
    /// there).
    static func found(in folder: String) -> [SpecFile] {
        var found: [[UInt8]] = []
        var seen: Set<[UInt8]> = []
        var root = Array(folder.utf8)
        if root.count > 1 && root.last == UInt8(ascii: "/") { root.removeLast() }
        collect(in: root, into: &found, seen: &seen, depth: 0)
        return found.sorted { $0.lexicographicallyPrecedes($1) }.map(SpecFile.init(path:))
    }

    private static func collect(in folder: [UInt8], into found: inout [[UInt8]], seen: inout Set<[UInt8]>, depth: Int) {
        guard depth < 64, let real = realPath(folder), seen.insert(real).inserted else { return }
        let suffix = Array("_spec.lua".utf8)
        for name in names(in: folder) where name.first != UInt8(ascii: ".") {
            let path = folder + [UInt8(ascii: "/")] + name
            var status = stat()
            // stat follows links: a linked folder is walked, a dangling link is skipped.
            guard withCString(path, { stat($0, &status) }) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFDIR {
                collect(in: path, into: &found, seen: &seen, depth: depth + 1)
            } else if name.count >= suffix.count && Array(name.suffix(suffix.count)) == suffix {
                found.append(path)
            }
        }
    }

    /// The entries of `folder` but `.` and `..`, as their bytes; none when it cannot be opened.
    private static func names(in folder: [UInt8]) -> [[UInt8]] {
        guard let directory = withCString(folder, { opendir($0) }) else { return [] }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            let name = DirectoryEntry.name(entry)
            if name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")] { names.append(name) }
        }
        return names
    }

    private static func realPath(_ path: [UInt8]) -> [UInt8]? {
        guard let resolved = withCString(path, { realpath($0, nil) }) else { return nil }
        defer { free(resolved) }
        return Array(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
    }

    /// Calls `body` with `bytes` as a NUL-terminated C string.
    private static func withCString<Result>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        (bytes.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { buffer in
            // Invariant: the buffer holds at least the NUL, so it has a base address.
            body(buffer.baseAddress!)
        }
    }
}
