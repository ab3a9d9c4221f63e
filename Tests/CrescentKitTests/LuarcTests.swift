import CrescentKit
import Model
import Testing

/// `.luarc.json`: Crescent's settings merged into the user's, the user's kept.
struct LuarcTests {
    static func decoded(_ text: String?) throws -> Value {
        try Value(jsonText: try #require(text))
    }

    @Test func theUsersKeysAreKeptAndOursAdded() throws {
        let merged = try Self.decoded(StubWriter.mergedLuarc(
            existing: #"{"runtime.version": "LuaJIT", "workspace.library": ["lib", "types"], "diagnostics.globals": ["vim"], "x": {"y": 1}}"#,
            library: "types"))
        #expect(merged["runtime.version"] == .string("LuaJIT"))
        #expect(merged["workspace.library"] == .array([.string("lib"), .string("types")]))
        #expect(merged["x"] == .object(["y": .integer(1)]))
        guard case .array(let globals) = merged["diagnostics.globals"] else { Issue.record("no globals"); return }
        #expect(globals.first == .string("vim"))
        #expect(Set(globals) == Set([.string("vim")] + StubWriter.globalNames.map { .string($0) }))
        #expect(merged["workspace.checkThirdParty"] == .bool(false))
    }

    @Test func aFileWithEverySettingIsLeftAlone() throws {
        #expect(try StubWriter.mergedLuarc(existing: StubWriter.luarc(library: "types"), library: "types") == nil)
        let once = try #require(try StubWriter.mergedLuarc(existing: "{}", library: "types"))
        #expect(try StubWriter.mergedLuarc(existing: once, library: "types") == nil)
    }

    @Test func aNestedSectionGetsOurKeysInside() throws {
        let merged = try Self.decoded(StubWriter.mergedLuarc(existing: #"{"workspace": {"library": ["lib"]}}"#, library: "types"))
        #expect(merged["workspace"]["library"] == .array([.string("lib"), .string("types")]))
        #expect(merged["workspace"]["checkThirdParty"] == .bool(false))
        #expect(merged["workspace.library"] == .null)
    }

    @Test(arguments: ["// a comment\n{}", "[1]", "", "{\"a\": }"])
    func whatIsNotAJSONObjectIsRefused(text: String) throws {
        #expect(throws: StubWriter.LuarcProblem.self) { try StubWriter.mergedLuarc(existing: text, library: "types") }
    }
}
