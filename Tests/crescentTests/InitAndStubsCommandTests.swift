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
        #expect(tested.stdoutLines.last == "3 passed, 0 failed", "\(tested)")

        let run = CrescentProcess(["main.lua"], directory: project)
        try run.start()
        let named = await run.waitForOutput("Paris", within: 30)
        run.send(SIGTERM, expecting: .handled)
        let result = await run.finish()
        #expect(named, "\(result)")
        #expect(result.stdout.contains("Where am I?"), "\(result)")
        #expect(result.status == 143, "\(result)")

        let again = try await crescent(["init", "demo"], in: sandbox)
        #expect(again.status == 1, "\(again)")
        #expect(again.stderr.contains("not overwriting") && !again.stderr.contains("Usage:"), "\(again)")
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

    /// The user's settings in an existing .luarc.json survive `stubs` and `init .`; Crescent's are
    /// added once (a second run changes nothing).
    /// A one-character folder (`--out x`, `--out t/`) gets the stubs as any other: Foundation's
    /// path splitting trapped on it (SIGILL, nothing said).
    @Test func stubsGoIntoAOneCharacterFolder() async throws {
        let sandbox = try Sandbox()
        for folder in ["x", "t/"] {
            let result = try await crescent(["stubs", "--out", folder], in: sandbox)
            #expect(result.status == 0, "\(folder): \(result)")
            let name = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
            #expect(FileManager.default.fileExists(atPath: sandbox.path + "/" + name + "/globals.lua"), "\(folder): \(result)")
        }
        #expect(FileManager.default.fileExists(atPath: sandbox.path + "/.luarc.json"))
    }

    /// Too few open files to start (`ulimit -n 7`): the run says so and exits 1; NIO stopped on
    /// an assertion before (SIGILL, nothing said). A low soft limit under a higher hard one is
    /// raised, and the run works.
    @Test func tooFewOpenFilesToStartIsSaid() async throws {
        let low = try await crescent(["-c", "ulimit -n 7 && exec \"$0\" -e 'print(1)'", CrescentProcess.binaryPath], executable: "/bin/sh")
        #expect(low.status == 1, "\(low)")
        #expect(low.stderr.contains("the open-file limit is 7 (ulimit -n), too few to start: crescent needs at least 16"), "\(low)")
        let soft = try await crescent(["-c", "ulimit -Sn 7 && ulimit -Hn 64 && exec \"$0\" -e 'print(1)'", CrescentProcess.binaryPath],
                                      executable: "/bin/sh")
        #expect(soft.status == 0 && soft.stdout == "1\n", "\(soft)")
    }

    @Test func anExistingLuarcKeepsTheUsersSettings() async throws {
        let sandbox = try Sandbox()
        let user = #"{"runtime.version": "LuaJIT", "workspace.library": ["lib"], "hint.enable": true, "diagnostics.globals": ["vim"]}"#
        try sandbox.write(".luarc.json", user)
        let result = try await crescent(["stubs"], in: sandbox)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("updated ./.luarc.json (your settings kept"), "\(result)")
        let merged = try JSONSerialization.jsonObject(with: Data(contentsOf: sandbox.url.appendingPathComponent(".luarc.json"))) as? [String: Any]
        #expect(merged?["runtime.version"] as? String == "LuaJIT")
        #expect(merged?["hint.enable"] as? Bool == true)
        #expect(merged?["workspace.library"] as? [String] == ["lib", "types"])
        let globals = merged?["diagnostics.globals"] as? [String] ?? []
        #expect(globals.first == "vim" && globals.contains("services") && globals.contains("controller"), "\(globals)")

        let again = try await crescent(["stubs"], in: sandbox)
        #expect(again.status == 0 && again.stdout.contains("kept ./.luarc.json"), "\(again)")

        // init . in a folder with only a .luarc.json (nested spelling): the settings stay too.
        let project = try Sandbox()
        try project.write(".luarc.json", #"{"workspace": {"library": ["lib"], "checkThirdParty": true}}"#)
        let made = try await crescent(["init", "."], in: project)
        #expect(made.status == 0, "\(made)")
        let nested = try JSONSerialization.jsonObject(with: Data(contentsOf: project.url.appendingPathComponent(".luarc.json"))) as? [String: Any]
        let workspace = nested?["workspace"] as? [String: Any]
        #expect(workspace?["library"] as? [String] == ["lib", "types"], "\(String(describing: nested))")
        #expect(workspace?["checkThirdParty"] as? Bool == true)
        #expect(nested?["diagnostics.globals"] != nil)
    }

    /// A .luarc.json that is not a JSON object, and a file in types/ that stubs did not write, are
    /// refused with a message, and left as they were.
    @Test func filesStubsCannotMergeAreRefusedNotOverwritten() async throws {
        let sandbox = try Sandbox()
        let commented = "// mine\n{ \"runtime.version\": \"LuaJIT\" }\n"
        try sandbox.write(".luarc.json", commented)
        let refused = try await crescent(["stubs"], in: sandbox)
        // Not a usage error (harden4 H9): exit 1, no usage line.
        #expect(refused.status == 1 && !refused.stderr.contains("Usage:"), "\(refused)")
        #expect(refused.stderr.hasPrefix("crescent: not rewriting ./.luarc.json: it is not JSON"), "\(refused)")
        #expect(try String(contentsOfFile: sandbox.path + "/.luarc.json", encoding: .utf8) == commented)
        #expect(!FileManager.default.fileExists(atPath: sandbox.path + "/types"), "nothing is written while anything is refused")

        let project = try Sandbox()
        try project.write("types/globals.lua", "-- my own globals\n")
        let mine = try await crescent(["init", "."], in: project)
        #expect(mine.status == 1 && !mine.stderr.contains("Usage:"), "\(mine)")
        #expect(mine.stderr.contains("not overwriting ./types/globals.lua: crescent stubs did not write it"), "\(mine)")
        #expect(try String(contentsOfFile: project.path + "/types/globals.lua", encoding: .utf8) == "-- my own globals\n")
        #expect(!FileManager.default.fileExists(atPath: project.path + "/main.lua"), "nothing is written while anything is refused")

        // A folder where .luarc.json belongs is named as such (harden4 H9).
        let folder = try Sandbox()
        try FileManager.default.createDirectory(atPath: folder.path + "/.luarc.json", withIntermediateDirectories: true)
        let blocked = try await crescent(["init", "."], in: folder)
        #expect(blocked.status == 1 && !blocked.stderr.contains("Usage:"), "\(blocked)")
        #expect(blocked.stderr.contains("cannot read ./.luarc.json: it is a folder"), "\(blocked)")

        // Stubs it wrote itself are rewritten.
        let stubs = try Sandbox()
        #expect(try await crescent(["stubs"], in: stubs).status == 0)
        let rewritten = try await crescent(["stubs"], in: stubs)
        #expect(rewritten.status == 0 && rewritten.stdout.contains("wrote types/globals.lua"), "\(rewritten)")
    }

    /// A folder that cannot be written is named with the system's reason, exit 1, no usage line and
    /// no Foundation error dump: a file in the way (as any user), and a folder not ours (as nobody).
    @Test func writeFailuresNameThePathAndTheReason() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("taken", "a file\n")
        let blocked = try await crescent(["init", "taken/project"], in: sandbox)
        #expect(blocked.status == 1, "\(blocked)")
        #expect(blocked.stderr == "crescent: cannot write taken: it is a file, not a folder\n", "\(blocked)")
        let stubs = try await crescent(["stubs", "--out", "taken/types"], in: sandbox)
        #expect(stubs.status == 1, "\(stubs)")
        #expect(stubs.stderr == "crescent: cannot write taken: it is a file, not a folder\n", "\(stubs)")

        // As nobody, in a folder only root may write (the sandbox): permission denied.
        let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups", CrescentProcess.binaryPath]
        let denied = try await crescent(nobody + ["init", "."], executable: "/usr/bin/setpriv", in: sandbox)
        #expect(denied.status == 1, "\(denied)")
        #expect(denied.stderr == "crescent: cannot write ./crescent.toml: Permission denied\n", "\(denied)")
        let deniedStubs = try await crescent(nobody + ["stubs"], executable: "/usr/bin/setpriv", in: sandbox)
        #expect(deniedStubs.status == 1, "\(deniedStubs)")
        #expect(deniedStubs.stderr == "crescent: cannot write types: Permission denied\n", "\(deniedStubs)")
    }
}
