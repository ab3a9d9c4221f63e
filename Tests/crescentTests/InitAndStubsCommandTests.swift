import Foundation
import Testing

/// `crescent init` end to end (the new project's tests pass and its main.lua runs) and
/// `crescent stubs` writing its files.
@Suite struct InitAndStubsCommandTests {
    @Test func aNewProjectPassesItsTestsAndRuns() async throws {
        let sandbox = try Sandbox()
        let made = try await crescent(["init", "demo"], in: sandbox)
        #expect(made.status == 0, "\(made)")
        let project = sandbox.path + "/demo"
        for file in ["crescent.toml", "main.lua", "spec/main_spec.lua", "types/services.lua", "types/globals.lua", "types/testing.lua", ".luarc.json"] {
            #expect(FileManager.default.fileExists(atPath: project + "/" + file), "\(file)")
        }
        let tested = try await crescent(["test"], in: sandbox, directory: project, timeLimit: 60)
        #expect(tested.status == 0, "\(tested)")
        #expect(tested.stdoutLines.last == "2 passed, 0 failed", "\(tested)")

        let run = CrescentProcess(["main.lua"], directory: project)
        try run.start()
        let named = await run.waitForOutput("Paris", within: 30)
        run.send(SIGTERM)
        let result = await run.finish()
        #expect(named, "\(result)")
        #expect(result.stdout.contains("Where am I?"), "\(result)")
        #expect(result.status == 143, "\(result)")

        let again = try await crescent(["init", "demo"], in: sandbox)
        #expect(again.status == 2, "\(again)")
        #expect(again.stderr.contains("not overwriting"), "\(again)")
    }

    @Test func stubsAreWrittenWithTheirLuarc() async throws {
        let sandbox = try Sandbox()
        let result = try await crescent(["stubs", "--out", "editor/types"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        let services = try String(contentsOfFile: sandbox.path + "/editor/types/services.lua", encoding: .utf8)
        #expect(services.contains("---@class crescent.service.geocoder: crescent.Object"))
        let luarc = try String(contentsOfFile: sandbox.path + "/editor/.luarc.json", encoding: .utf8)
        #expect(luarc.contains("\"workspace.library\": [\"types\"]"), "\(luarc)")
    }
}
