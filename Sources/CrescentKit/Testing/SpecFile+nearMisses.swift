import Foundation

extension SpecFile {
    /// What a run that found no spec file names besides: the `.lua` files it passed over in the
    /// folders it searched (`foo_test.lua`, `Foo_Spec.lua`: busted's name is `*_spec.lua`, in
    /// lower case), and, searching the default folders, the specs in a folder it does not search
    /// (`tests/`, `specs/`). Empty when there is nothing to name.
    static func nearMisses(paths: [String]) -> String {
        let manager = FileManager.default
        let searched = paths.isEmpty ? ["spec", "test"] : paths
        var skipped: [String] = []
        for root in searched {
            var isFolder: ObjCBool = false
            guard manager.fileExists(atPath: root, isDirectory: &isFolder), isFolder.boolValue,
                  let walker = manager.enumerator(atPath: root) else { continue }
            var seen = 0
            // A bounded look: the names shown are a hint, not a listing of a large tree.
            while let entry = walker.nextObject() as? String, seen < listLimit * 100 {
                seen += 1
                let name = (entry as NSString).lastPathComponent
                if name.hasPrefix(".") {
                    walker.skipDescendants()
                    continue
                }
                if name.hasSuffix(".lua") || name.lowercased().hasSuffix(".lua") { skipped.append(root + "/" + entry) }
            }
        }
        var notes: [String] = []
        if !skipped.isEmpty {
            let shown = skipped.sorted().prefix(listLimit).joined(separator: ", ") + (skipped.count > listLimit ? ", …" : "")
            notes.append("passed over: \(shown) (a spec file's name ends in _spec.lua, in lower case, as busted finds them)")
        }
        if paths.isEmpty {
            for folder in ["tests", "specs"] {
                let count = found(in: folder).count
                guard count > 0 else { continue }
                notes.append("\(folder)/ holds \(count) spec file\(count == 1 ? "" : "s"): run crescent test \(folder)")
            }
        }
        return notes.isEmpty ? "" : "; " + notes.joined(separator: "; ")
    }

    /// How many passed-over files are named.
    private static let listLimit = 5
}
