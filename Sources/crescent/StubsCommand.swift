import ArgumentParser
import CrescentKit
import Foundation
import Model

/// `crescent stubs [--out DIR]`: LuaLS annotation files and `.luarc.json`, from the declarations.
struct StubsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stubs",
        abstract: "Write LuaLS (LuaCATS) annotation files for every global and service, and a .luarc.json beside them.",
        discussion: "The stubs go in DIR (default: types); .luarc.json goes in DIR's parent folder, pointing at DIR."
    )

    @Option(help: ArgumentHelp("The folder for the annotation files.", valueName: "dir"))
    var out = "types"

    @Option(help: ArgumentHelp("The config file (default: crescent.toml in the current folder).", valueName: "file"))
    var config: String?

    func run() throws {
        var options = HostOptions()
        options.configPath = config
        let entries: [ServiceEntry]
        do throws(HostSetupError) {
            entries = try ServiceFactory.entries(plugins: [.standard], options: options)
        } catch {
            Crescent.usageError(error.description)
        }
        do {
            let written = try Self.write(entries: entries, to: out)
            ProcessIO.writeOut(written.map { "wrote \($0)" }.joined(separator: "\n") + "\n")
        } catch {
            Crescent.usageError("cannot write the stubs to \(out): \(error.localizedDescription)")
        }
    }

    /// Writes the stubs into `folder` and `.luarc.json` beside it; returns the paths written.
    static func write(entries: [ServiceEntry], to folder: String) throws -> [String] {
        let manager = FileManager.default
        try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var written: [String] = []
        for file in StubWriter.files(for: entries) {
            let path = (folder as NSString).appendingPathComponent(file.name)
            try file.text.write(toFile: path, atomically: true, encoding: .utf8)
            written.append(path)
        }
        let trimmed = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        let parent = (trimmed as NSString).deletingLastPathComponent
        let luarc = ((parent.isEmpty ? "." : parent) as NSString).appendingPathComponent(".luarc.json")
        try StubWriter.luarc(library: (trimmed as NSString).lastPathComponent).write(toFile: luarc, atomically: true, encoding: .utf8)
        written.append(luarc)
        return written
    }
}
