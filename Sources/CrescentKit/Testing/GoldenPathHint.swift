import Foundation
import Model

/// What a spec's `assert.view(golden)` says about a golden file that is not there: where relative
/// paths are read from, whether the file's folder exists (`--update` cannot write into a folder
/// that is not there), and the golden file most likely meant (`golden/mian.txt` for
/// `spec/golden/main.txt`, which a path read from the wrong folder also misses).
struct GoldenPathHint: Equatable {
    /// `golden paths are read from the folder crescent test runs in (/x)[; did you mean 'y'?]`.
    let text: String
    /// The file's folder, when it does not exist.
    let missingFolder: String?

    /// How many entries of the current folder's tree are looked at for a near name, at most, and
    /// how deep: a run started in a large tree stays quick, and golden files sit near the specs.
    private static let entryLimit = 5000
    private static let depthLimit = 4

    /// The hint for `path`, relative paths read from `folder`.
    init(path: String, folder: String = FileManager.default.currentDirectoryPath) {
        var parts: [String] = []
        if !path.hasPrefix("/") { parts.append("golden paths are read from the folder crescent test runs in (\(folder))") }
        let parent = (path as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        if !parent.isEmpty, !(FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder) && isFolder.boolValue) {
            missingFolder = parent
        } else {
            missingFolder = nil
        }
        if !path.hasPrefix("/"), let near = Self.nearFile(to: path, in: folder) { parts.append("did you mean '\(near)'?") }
        text = parts.joined(separator: "; ")
    }

    /// The file under `folder` whose path ends like `path` (as many components), the same or a
    /// few edits away, other than `path` itself; nil when none is close.
    private static func nearFile(to path: String, in folder: String) -> String? {
        let wanted = path.split(separator: "/").map(String.init)
        guard !wanted.isEmpty, let walker = FileManager.default.enumerator(atPath: folder) else { return nil }
        var byTail: [String: String] = [:]
        var seen = 0
        while let entry = walker.nextObject() as? String, seen < entryLimit {
            seen += 1
            let name = (entry as NSString).lastPathComponent
            if name.hasPrefix(".") || walker.level >= depthLimit {
                walker.skipDescendants()
                if name.hasPrefix(".") { continue }
            }
            let components = entry.split(separator: "/").map(String.init)
            guard components.count >= wanted.count, entry != path else { continue }
            let tail = components.suffix(wanted.count).joined(separator: "/")
            if byTail[tail] == nil { byTail[tail] = entry }
        }
        // The same path under another folder (`spec/golden/main.txt` for `golden/main.txt`).
        if let same = byTail[path] { return same }
        return NameSuggestion.closest(to: path, among: byTail.keys.sorted(), prefixes: false).flatMap { byTail[$0] }
    }
}
