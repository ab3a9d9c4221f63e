import Foundation
import Testing

/// The Lua-level tests in Tests/lua/: each `*.lua` file runs through crescent and must exit 0 and
/// print an `ok ...` line. New files are picked up automatically.
@Suite struct LuaScriptTests {
    static let folder = CrescentProcess.packageRoot.appendingPathComponent("Tests/lua", isDirectory: true)

    /// The `*.lua` files of Tests/lua, by name, sorted.
    static var scripts: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".lua") }.sorted()
    }

    @Test func theFolderHasLuaTests() {
        #expect(!Self.scripts.isEmpty, "no .lua files in \(Self.folder.path)")
    }

    @Test(arguments: scripts)
    func luaTestPasses(_ name: String) async throws {
        let path = Self.folder.appendingPathComponent(name).path
        let result = try await crescent([path], directory: CrescentProcess.packageRoot.path)
        #expect(result.status == 0, "\(name): \(result)")
        #expect(result.stdoutLines.contains { $0 == "ok" || $0.hasPrefix("ok ") }, "\(name) printed no 'ok' line: \(result)")
        #expect(result.stderrShowsNoCrash, "\(result)")
    }
}
