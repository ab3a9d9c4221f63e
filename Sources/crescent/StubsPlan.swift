import CrescentKit
import Foundation
import Services
import Model

/// What writing the stubs into a folder will do, decided before anything is written: the
/// annotation files, and `.luarc.json` beside the folder made, merged with the user's, or kept.
///
/// A file in the folder that `crescent stubs` did not write (it does not start with the stubs'
/// `---@meta crescent` line) and a `.luarc.json` that is not a JSON object are refused, never
/// overwritten.
struct StubsPlan {
    /// The files to write, with their text.
    private(set) var files: [(path: String, text: String)] = []
    /// What stops the plan ("not overwriting PATH: why"); nothing is written while there is any.
    private(set) var refusals: [String] = []
    /// What to say of each file written other than "wrote PATH" (a merged `.luarc.json`).
    private var notes: [String: String] = [:]
    /// Said after the files: a `.luarc.json` that already has every setting, and is not written.
    private var kept: String?
    /// The user's `.luarc.json` names another Lua than crescent's (said on stderr).
    private(set) var runtimeWarning: String?

    init(entries: [ServiceEntry], folder: String) throws(ProjectFiles.Failure) {
        for file in StubWriter.files(for: entries) {
            let path = (folder as NSString).appendingPathComponent(file.name)
            if let existing = try ProjectFiles.read(path), !existing.hasPrefix("---@meta crescent") {
                refusals.append("not overwriting \(path): crescent stubs did not write it (move it away or choose another --out)")
            }
            files.append((path, file.text))
        }
        let trimmed = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        let (parent, library) = Folders.split(trimmed)
        let luarc = (parent.isEmpty ? "." : parent == "/" ? "" : parent) + "/.luarc.json"
        guard let existing = try ProjectFiles.read(luarc) else {
            files.append((luarc, StubWriter.luarc(library: library)))
            return
        }
        runtimeWarning = StubWriter.runtimeVersionWarning(existing: existing, path: luarc)
        do {
            if let merged = try StubWriter.mergedLuarc(existing: existing, library: library) {
                files.append((luarc, merged))
                notes[luarc] = "updated \(luarc) (your settings kept, Crescent's added)"
            } else {
                kept = "kept \(luarc) (it has Crescent's settings)"
            }
        } catch {
            refusals.append("not rewriting \(luarc): \(error.description); add \"workspace.library\": [\"\(library)\"] "
                            + "to it by hand, or move it away")
        }
    }

    /// Writes the files; returns a line for each ("wrote PATH").
    func write() throws(ProjectFiles.Failure) -> [String] {
        var lines: [String] = []
        for file in files {
            try ProjectFiles.write(file.text, to: file.path)
            lines.append(notes[file.path] ?? "wrote \(file.path)")
        }
        if let kept { lines.append(kept) }
        return lines
    }
}
