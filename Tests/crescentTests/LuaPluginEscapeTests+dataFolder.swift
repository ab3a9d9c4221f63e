import Foundation
import Testing

/// A Lua plugin's data folder (`DATA/plugin-data/NAME`): whose it is, and what a link in it does.
extension LuaPluginEscapeTests {
    /// Fourth permissions attack X7: the data folder was keyed by the plugin's name alone, so a
    /// cloned project's plugin of the same name (asking nothing) read and rewrote the data of the
    /// plugin the user had installed and granted. The folder belongs to the plugin folder that
    /// used it first; another folder's plugin of that name gets one of its own.
    @Test func aSameNamedPluginFromAnotherFolderGetsADataFolderOfItsOwn() async throws {
        let sandbox = try self.sandbox()
        let data = sandbox.path + "/.local/share/crescent/plugin-data/escape"
        let first = try await run(["e:write('\(data)/token.txt')", "e:read('\(data)/token.txt')"], in: sandbox)
        #expect(first.stdoutLines.prefix(2) == ["ok written", "ok escaped"], "\(first)")
        try sandbox.write("clone/plugins/escape/plugin.toml", Self.manifest(""))
        try sandbox.write("clone/plugins/escape/main.lua", Self.main)
        let body = "print((services.escape:read('\(data)/token.txt'):gsub('\\n', ' '))) "
            + "print((services.escape:write('\(data)/token.txt'):gsub('\\n', ' ')))"
        let impostor = try await inHome(["-e", "task(function() \(body) end)"], sandbox, directory: sandbox.path + "/clone")
        #expect(impostor.stdoutLines.count == 2 && impostor.stdoutLines.allSatisfy { $0.hasPrefix("refused") }, "\(impostor)")
        #expect(try String(contentsOfFile: data + "/token.txt", encoding: .utf8) == "escaped")
        let again = try await run(["e:read('\(data)/token.txt')"], in: sandbox)
        #expect(again.stdoutLines.first == "ok escaped", "\(again)")
    }

    /// A data folder made before owners were recorded (no `escape.owner` beside it) went to the
    /// first plugin of its name to run, from whatever folder: a cloned project's `plugins/escape`
    /// run first took the data of the plugin the user installed. Such data is the installed
    /// plugin's.
    @Test func dataWithNoOwnerRecordIsTheInstalledPlugins() async throws {
        let sandbox = try self.sandbox()
        let crescentData = sandbox.path + "/.local/share/crescent"
        let data = crescentData + "/plugin-data/escape"
        try sandbox.write(".local/share/crescent/plugin-data/escape/token.txt", "from before\n")
        for folder in [crescentData, crescentData + "/plugin-data", data] { chmod(folder, 0o700) }
        try sandbox.write(".local/share/crescent/plugins/escape/plugin.toml", Self.manifest(""))
        try sandbox.write(".local/share/crescent/plugins/escape/main.lua", Self.main)
        try sandbox.write("clone/plugins/escape/plugin.toml", Self.manifest(""))
        try sandbox.write("clone/plugins/escape/main.lua", Self.main)
        let body = "print((services.escape:read('\(data)/token.txt'):gsub('\\n', ' ')))"
        let clone = try await inHome(["-e", "task(function() \(body) end)"], sandbox, directory: sandbox.path + "/clone")
        #expect(clone.stdoutLines.count == 1 && clone.stdoutLines.allSatisfy { $0.hasPrefix("refused") }, "\(clone)")
        #expect(!FileManager.default.fileExists(atPath: data + ".owner"), "the clone claimed the data")
        try FileManager.default.createDirectory(atPath: sandbox.path + "/elsewhere", withIntermediateDirectories: true)
        let installed = try await inHome(["-e", "task(function() \(body) end)"], sandbox, directory: sandbox.path + "/elsewhere")
        #expect(installed.stdoutLines == ["ok from before "], "\(installed)")
        #expect(FileManager.default.fileExists(atPath: data + ".owner"))
    }

    /// Fourth permissions attack X2: a link in its own data folder leading outside its grants
    /// (made by a program it runs) could not be removed or renamed: the check followed it.
    /// The link itself goes; what it led to stays.
    @Test func aLinkInItsDataFolderLeadingOutCanBeRemoved() async throws {
        let sandbox = try self.sandbox()
        let home = sandbox.path
        let data = home + "/.local/share/crescent/plugin-data/escape"
        // A first run makes the folder, this plugin's (data with no owner record would be the
        // installed plugin's, not this project's plugin's).
        #expect(try await run([], in: sandbox).status == 0)
        try FileManager.default.createSymbolicLink(atPath: data + "/v", withDestinationPath: home + "/other")
        try FileManager.default.createSymbolicLink(atPath: data + "/w", withDestinationPath: home + "/secret.txt")
        let result = try await run(["e:remove('\(data)/v')", "e:rename('\(data)/w', '\(data)/w2')", "e:read('\(data)/w2')"], in: sandbox)
        let lines = result.stdoutLines
        try #require(lines.count == 4, "\(result)")
        #expect(lines[0] == "ok true" && lines[1] == "ok true", "\(result)")
        #expect(lines[2].hasPrefix("refused") && !lines[2].contains("TOPSECRET"), "still not read through: \(lines[2])")
        let files = FileManager.default
        #expect(!files.fileExists(atPath: data + "/v") && files.fileExists(atPath: home + "/other/secret.txt"))
        #expect((try? files.destinationOfSymbolicLink(atPath: data + "/w2")) == home + "/secret.txt")
    }
}
