import Foundation
import Testing

/// The grants file (`DATA/plugin-grants.toml`) under writers at once and when it is broken: found
/// by the permissions attack (20 `plugins allow` at once recorded 5 to 12 grants; a broken line
/// made the next `allow` rewrite the file with only its own grant).
@Suite struct PluginGrantFileTests {
    static let count = 12

    func sandbox() throws -> Sandbox {
        let sandbox = try Sandbox()
        for index in 1...Self.count {
            try sandbox.write("plugins/music\(index)/plugin.toml", PluginGrantTests.manifest("read = [\"~/Music\"]")
                .replacingOccurrences(of: "\"music\"", with: "\"music\(index)\""))
            try sandbox.write("plugins/music\(index)/main.lua", PluginGrantTests.main.replacingOccurrences(of: "\"music\"", with: "\"music\(index)\""))
        }
        return sandbox
    }

    var grantsPath: String { "/.local/share/crescent/plugin-grants.toml" }

    @Test func grantsMadeAtOnceAreAllRecorded() async throws {
        let sandbox = try self.sandbox()
        let statuses = try await withThrowingTaskGroup(of: Int32.self) { group in
            for index in 1...Self.count {
                group.addTask { try await inHome(["plugins", "allow", "music\(index)"], sandbox).status }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 0 }, "\(statuses)")
        let grants = try String(contentsOfFile: sandbox.path + grantsPath, encoding: .utf8)
        for index in 1...Self.count {
            #expect(grants.contains("[music\(index)]"), "music\(index) is missing:\n\(grants)")
        }
    }

    @Test func aBrokenGrantsFileIsLeftAsItIsAndSaidSo() async throws {
        let sandbox = try self.sandbox()
        #expect(try await inHome(["plugins", "allow", "music1"], sandbox).status == 0)
        let broken = try String(contentsOfFile: sandbox.path + grantsPath, encoding: .utf8) + "this is not toml\n"
        try sandbox.write(String(grantsPath.dropFirst()), broken)
        let allowed = try await inHome(["plugins", "allow", "music2"], sandbox)
        #expect(allowed.status != 0, "\(allowed)")
        #expect(allowed.stderr.contains("the grants file was left as it is: fix or remove it"), "\(allowed)")
        #expect(try String(contentsOfFile: sandbox.path + grantsPath, encoding: .utf8) == broken, "the file is untouched")
    }

    /// A `grant-key` that is a symbolic link (here to /dev/zero) is refused, as before, but said
    /// so with the fix; it said only "cannot make the key that signs grants (File exists)", and
    /// "make" of a key that exists (attack new24p D9): "cannot use" now.
    @Test func aGrantKeyThatIsALinkIsRefusedNamingTheLinkAndTheFix() async throws {
        let sandbox = try self.sandbox()
        let key = sandbox.path + "/.local/share/crescent/grant-key"
        try FileManager.default.createDirectory(atPath: sandbox.path + "/.local/share/crescent", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: key, withDestinationPath: "/dev/zero")
        let refused = try await inHome(["plugins", "allow", "music1"], sandbox)
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.stderr.contains("\(key): cannot use the key that signs grants: it is a symbolic link (to /dev/zero), and the key is "
                                        + "read only from a file of its own there; remove it (rm \(key)) and run the command again"), "\(refused)")
        #expect(!refused.stderr.contains("File exists"), "\(refused)")
        // A key of the wrong size is named likewise.
        try FileManager.default.removeItem(atPath: key)
        try sandbox.write(".local/share/crescent/grant-key", "short")
        let short = try await inHome(["plugins", "allow", "music1"], sandbox)
        #expect(short.status != 0 && short.stderr.contains("it holds 5 bytes, not the 32 of a key; remove it"), "\(short)")
        // The fix it names works.
        try FileManager.default.removeItem(atPath: key)
        #expect(try await inHome(["plugins", "allow", "music1"], sandbox).status == 0)
    }
}
