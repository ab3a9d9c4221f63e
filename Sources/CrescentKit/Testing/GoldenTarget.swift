import Foundation

/// Whether `assert.view(golden)` may read or (under `--update`) write the golden file at a path:
/// a golden file is a view's text, so `--update` must never replace a spec, a script or a Lua
/// file under test with it, a settings file the runs read, or anything outside the folder
/// `crescent test` runs in; and a FIFO or a device is no golden file to read (it would block
/// until the time limit, or fill memory).
enum GoldenTarget {
    /// Why `path` cannot be the golden file (its kind when read; also the rules of writing when
    /// `writing`), naming the path, the rule and the fix; nil when it can.
    static func refusal(_ path: String, writing: Bool,
                        folder: String = FileManager.default.currentDirectoryPath) -> String? {
        if let kind = RegularFile.nonRegularKind(path), kind != "a directory" || writing {
            return "the golden file \(path) is \(kind), not a regular file; name a text file, such as spec/golden/main.txt"
        }
        guard writing else { return nil }
        let name = (path as NSString).lastPathComponent
        if name.hasSuffix(".lua") {
            return "--update will not write the golden file \(path): a .lua file is a spec, a script or a module under test, "
                + "which the view's text would replace; name a text file, such as spec/golden/main.txt"
        }
        if name == ".busted" || name == "crescent.toml" || name == "plugin.toml" {
            return "--update will not write the golden file \(path): \(name) is a settings file the runs read; "
                + "name a text file, such as spec/golden/main.txt"
        }
        guard let project = realPath(folder) else { return nil }
        let absolute = path.hasPrefix("/") ? path : folder + "/" + path
        if let resolved = resolved(absolute), resolved != project, !resolved.hasPrefix(project + "/") {
            return "--update will not write the golden file \(path): it is outside the folder crescent test runs in (\(project)), "
                + "and golden paths are read from there; name a file inside it, such as spec/golden/main.txt"
        }
        return nil
    }

    /// The path with its links and `..` resolved: the file's own when it exists, else its
    /// folder's (the nearest one that exists) and the rest of the path as it is.
    private static func resolved(_ absolute: String) -> String? {
        var rest: [String] = []
        var current = absolute
        for _ in 0..<256 {
            if let real = realPath(current) {
                guard !rest.isEmpty else { return real }
                // What is missing past an existing folder: its `..` still climbs.
                return (([real] + rest.reversed()).joined(separator: "/") as NSString).standardizingPath
            }
            let parent = (current as NSString).deletingLastPathComponent
            guard parent != current, !parent.isEmpty else { return nil }
            rest.append((current as NSString).lastPathComponent)
            current = parent
        }
        return nil
    }

    private static func realPath(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }
}
