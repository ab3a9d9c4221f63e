import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// DESIGN.md (Plugins › Permissions): a Lua plugin that requires `files` or `process` reaches
/// through them only what its grants name (`read`, `write`, `exec`), its own folder and its data
/// folder, by the rule its wrapped `io` follows; a refusal is `permission` naming the plugin, the
/// path or program and the grant to add, and a warning in the host's log. Attack new29a D1: with
/// `read = [ALLOWED]` only, such a plugin read /etc/shadow, read through `..` and a link out of
/// the granted folder, wrote anywhere and ran `id`. Each test runs the binary (`CRESCENT_BIN`
/// names an older one) on real plugin folders, files and programs in a temporary folder.
@Suite struct PluginServiceAccessTests {
    static func manifest(_ permissions: String) -> String {
        """
        name = "probe"
        version = "1.0.0"
        crescent = ">=0.1.0"
        kind = "lua"
        main = "main.lua"
        services = ["probe"]
        requires = ["files", "process"]

        [permissions]
        \(permissions)
        """
    }

    /// `files(op, path [, data])` and `run(argv [, options])` / `spawn(argv)`: "ok RESULT" or
    /// "refused ERROR".
    static let main = """
        local F, P = services.files, services.process
        local probe = service("probe", "Reaches files and programs.")
        local function answer(called, value, err)
          if not called then return "refused " .. tostring(value) end
          if err ~= nil then return "refused " .. tostring(err) end
          return "ok " .. tostring(value)
        end
        probe:method("files", { "op: string", "path: string", "data: string?" }, "string", "A files call.", function(op, path, data)
          if op == "read" then return answer(pcall(function() return F:read(path) end)) end
          if op == "write" then return answer(pcall(function() return F:write(path, data or "written") end)) end
          if op == "list" then
            return answer(pcall(function()
              local names, err = F:list(path)
              return names and table.concat(names, ","), err
            end))
          end
          if op == "stat" then
            return answer(pcall(function()
              local described, err = F:stat(path)
              return described and described.kind, err
            end))
          end
          if op == "watch" then
            return answer(pcall(function()
              local watcher = F:watch(path)
              watcher:cancel()
              return "watching"
            end))
          end
          return "refused unknown op " .. op
        end)
        probe:method("run", { "argv: value", "options: table?" }, "string", "A process call.", function(argv, options)
          return answer(pcall(function()
            local result, err = P:run(argv, options)
            if result and result.status ~= 0 then return "exit " .. tostring(result.status) .. " " .. result.stderr, err end
            return result and (result.stdout:gsub("\\n$", "")), err
          end))
        end)
        probe:method("spawn", { "argv: value" }, "string", "A spawned process.", function(argv)
          return answer(pcall(function()
            local process = P:spawn(argv)
            process:kill()
            return "spawned"
          end))
        end)
        """

    /// A sandbox with the plugin granted `permissions`, a secret outside every grant, a granted
    /// folder `allowed` holding a file, a link out of it and a `..` way out.
    struct Setup {
        let sandbox: Sandbox
        var path: String { sandbox.path }
        var allowed: String { path + "/allowed" }
        var secret: String { path + "/outside/secret" }
        var plugin: String { path + "/plugins/probe" }
        var data: String { path + "/.local/share/crescent/plugin-data/probe" }

        init(_ permissions: (Setup) -> String) async throws {
            sandbox = try Sandbox()
            try sandbox.write("outside/secret", "top secret\n")
            try sandbox.write("allowed/notes.txt", "granted notes")
            try sandbox.write("plugins/probe/main.lua", PluginServiceAccessTests.main)
            try sandbox.write("plugins/probe/own.txt", "its own file")
            try sandbox.write("plugins/probe/plugin.toml", PluginServiceAccessTests.manifest(permissions(self)))
            #expect(symlink(path + "/outside", allowed + "/link") == 0)
            let granted = try await inHome(["plugins", "allow", "probe"], sandbox)
            try #require(granted.status == 0, "\(granted)")
        }

        /// Runs each call (Lua, one expression answering a string) and answers its line.
        func run(_ calls: [String], environment: [String: String?] = [:]) async throws -> (answers: [String], result: RunResult) {
            let code = "task(function()\n" + calls.map { "  print((\($0):gsub(\"\\n\", \" \")))" }.joined(separator: "\n") + "\nend)"
            let result = try await inHome(["-e", code], sandbox, environment: environment)
            #expect(!result.killedBySignal && result.stderrShowsNoCrash, "\(result)")
            return (result.stdoutLines, result)
        }
    }

    /// Whether `answer` is the `permission` refusal of the plugin for `field` (read, write).
    static func refused(_ answer: String, _ field: String) -> Bool {
        answer.hasPrefix("refused ") && answer.contains("permission: plugin 'probe' may not \(field)")
            && answer.contains("[permissions] \(field)") && answer.contains("crescent plugins allow probe")
    }

    /// Every escape the attack found through `files` is refused, each naming the path and the
    /// grant, each warned in the host's log; the secret never reaches the plugin.
    @Test func filesOutsideTheGrantsAreRefused() async throws {
        let setup = try await Setup { "read = [\"\($0.allowed)\"]" }
        let (answers, result) = try await setup.run([
            "services.probe:files('read', '\(setup.secret)')",
            "services.probe:files('read', '\(setup.allowed)/../outside/secret')",
            "services.probe:files('read', '\(setup.allowed)/link/secret')",
            "services.probe:files('list', '\(setup.path)/outside')",
            "services.probe:files('list', '\(setup.allowed)/link')",
            "services.probe:files('stat', '\(setup.secret)')",
            "services.probe:files('watch', '\(setup.path)/outside')",
            "services.probe:files('read', '../../outside/secret')",
            "services.probe:files('write', '\(setup.path)/outside/new.txt')",
            "services.probe:files('write', '\(setup.allowed)/notes.txt')",
        ])
        try #require(answers.count == 10, "\(result)")
        for (index, answer) in answers.enumerated() {
            #expect(Self.refused(answer, index < 8 ? "read" : "write"), "call \(index + 1): \(answer)")
            #expect(!answer.contains("top secret"), "call \(index + 1): \(answer)")
        }
        #expect(answers[0].contains(setup.secret), "\(answers[0])")
        // The way out is named with where it leads.
        #expect(answers[1].contains("(that is \(setup.secret))"), "\(answers[1])")
        #expect(answers[2].contains("(that is \(setup.secret))"), "\(answers[2])")
        #expect(!FileManager.default.fileExists(atPath: setup.path + "/outside/new.txt"))
        #expect(try String(contentsOfFile: setup.allowed + "/notes.txt", encoding: .utf8) == "granted notes")
        let warnings = result.stderrLines.filter { $0.hasPrefix("warn: plugin 'probe': ") && $0.contains("may not") }
        #expect(warnings.count == 10, "\(result)")
    }

    /// What the grants name works: the granted folder read, listed, stat'ed (a link described
    /// itself) and watched; its own folder read by a relative path (from its folder, wherever
    /// crescent runs); its data folder written and read back.
    @Test func filesInsideTheGrantsWork() async throws {
        let setup = try await Setup { "read = [\"\($0.allowed)\"]" }
        let (answers, result) = try await setup.run([
            "services.probe:files('read', '\(setup.allowed)/notes.txt')",
            "services.probe:files('list', '\(setup.allowed)')",
            "services.probe:files('stat', '\(setup.allowed)/link')",
            "services.probe:files('watch', '\(setup.allowed)')",
            "services.probe:files('read', 'own.txt')",
            "services.probe:files('write', '\(setup.data)/saved.txt', 'kept')",
            "services.probe:files('read', '\(setup.data)/saved.txt')",
        ])
        #expect(answers == ["ok granted notes", "ok link,notes.txt", "ok link", "ok watching", "ok its own file", "ok true", "ok kept"],
                "\(result)")
    }

    /// A plugin that requires `files` and `process` but is granted no `read`, `write` or `exec`
    /// reaches its own folder and its data folder only, and runs nothing.
    @Test func withoutGrantsOnlyItsOwnFolders() async throws {
        let setup = try await Setup { _ in "" }
        let (answers, result) = try await setup.run([
            "services.probe:files('read', 'own.txt')",
            "services.probe:files('write', '\(setup.data)/x.txt', 'x')",
            "services.probe:files('read', '\(setup.allowed)/notes.txt')",
            "services.probe:files('write', '\(setup.plugin)/own.txt', 'changed')",
            "services.probe:run({ 'true' })",
        ])
        try #require(answers.count == 5, "\(result)")
        #expect(answers[0] == "ok its own file" && answers[1] == "ok true", "\(result)")
        #expect(Self.refused(answers[2], "read") && Self.refused(answers[3], "write"), "\(result)")
        #expect(answers[4].hasPrefix("refused ") && answers[4].contains("may not run 'true': not granted"), "\(result)")
        #expect(try String(contentsOfFile: setup.plugin + "/own.txt", encoding: .utf8) == "its own file")
    }

    /// Programs run only by `exec`: a name not granted, a path not granted, `shell = true`
    /// without `sh` and a spawn are refused naming the program and the grant; the granted one
    /// runs, found where its grant says (a PATH the plugin sets cannot swap in another file), in
    /// the plugin's folder, with only the granted environment variables.
    @Test func programsRunOnlyByExec() async throws {
        let setup = try await Setup { _ in "exec = [\"echo\", \"pwd\"]" }
        try setup.sandbox.write("fakebin/echo", "#!/bin/sh\nprintf 'impostor\\n'\n", executable: true)
        let (answers, result) = try await setup.run([
            "services.probe:run({ 'id', '-u' })",
            "services.probe:run({ '/usr/bin/id', '-u' })",
            "services.probe:run('id -u', { shell = true })",
            "services.probe:spawn({ 'id' })",
            "services.probe:run({ '\(setup.path)/fakebin/echo', 'x' })",
            "services.probe:run({ 'echo', 'hello' })",
            "services.probe:run({ 'echo', 'hello' }, { env = { PATH = '\(setup.path)/fakebin' } })",
            "services.probe:run({ 'pwd' })",
            "services.probe:run({ 'pwd' }, { cwd = '\(setup.path)/outside' })",
        ])
        try #require(answers.count == 9, "\(result)")
        for index in 0..<5 {
            #expect(answers[index].hasPrefix("refused ") && answers[index].contains("permission: plugin 'probe' may not run")
                    && answers[index].contains("crescent plugins allow probe"), "call \(index + 1): \(answers[index])")
        }
        #expect(answers[0].contains("'id': not granted (add it to [permissions] exec"), "\(answers[0])")
        #expect(answers[1].contains("/usr/bin/id") && answers[1].contains("not a program its exec grants"), "\(answers[1])")
        #expect(answers[2].contains("shell = true: the shell is the program sh, which is not granted"), "\(answers[2])")
        #expect(answers[4].contains("fakebin/echo"), "\(answers[4])")
        #expect(answers[5] == "ok hello" && answers[6] == "ok hello", "\(result)")
        #expect(answers[7] == "ok \(setup.plugin)", "\(result)")
        #expect(Self.refused(answers[8], "read") && answers[8].contains("options.cwd"), "\(result)")
        let warnings = result.stderrLines.filter { $0.hasPrefix("warn: plugin 'probe': ") && $0.contains("may not") }
        #expect(warnings.count == 6, "\(result)")
    }

    /// A granted program runs confined to the plugin's grants, as its `io.popen` ones do:
    /// `cat` reads the granted folder, not a file outside it, and writes nowhere but the data
    /// folder (a granted program was a way around every list: `cat /etc/shadow`).
    @Test func aGrantedProgramIsConfinedToTheGrants() async throws {
        let setup = try await Setup { "read = [\"\($0.allowed)\"]\nexec = [\"cat\", \"sh\"]" }
        let (answers, result) = try await setup.run([
            "services.probe:run({ 'cat', '\(setup.allowed)/notes.txt' })",
            "services.probe:run({ 'cat', '\(setup.secret)' })",
            "services.probe:run('echo x > \(setup.path)/outside/made.txt', { shell = true })",
            "services.probe:run('echo kept > \(setup.data)/made.txt && cat \(setup.data)/made.txt', { shell = true })",
        ])
        try #require(answers.count == 4, "\(result)")
        #expect(answers[0] == "ok granted notes", "\(result)")
        #expect(answers[1].hasPrefix("ok exit 1 ") && answers[1].contains("Permission denied") && !answers[1].contains("top secret"), "\(result)")
        #expect(answers[2].hasPrefix("ok exit ") && answers[2].contains("Permission denied"), "\(result)")
        #expect(answers[3] == "ok kept", "\(result)")
        #expect(!FileManager.default.fileExists(atPath: setup.path + "/outside/made.txt"))
    }

    /// With `sh` granted a command line runs (and the error said so: it grants every program);
    /// a variable the host has and the grant does not name does not reach it.
    @Test func aShellRunsWhenShIsGranted() async throws {
        let setup = try await Setup { _ in "exec = [\"sh\"]\nenv = [\"GRANTED_VALUE\"]" }
        let (answers, result) = try await setup.run([
            "services.probe:run('echo $((1 + 2)) [$GRANTED_VALUE] [$SECRET_VALUE]', { shell = true })",
        ], environment: ["GRANTED_VALUE": "yes", "SECRET_VALUE": "leaked"])
        #expect(answers == ["ok 3 [yes] []"], "\(result)")
    }

    /// What `plugin check` and the grant question say of `requires files` and `requires process`
    /// is what they do now: they reach only what read, write and exec grant.
    @Test func theGrantWordingSaysWhatTheServicesReach() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/probe/main.lua", Self.main)
        try sandbox.write("plugins/probe/plugin.toml", Self.manifest("exec = [\"echo\"]"))
        let checked = try await inHome(["plugin", "check", "plugins/probe"], sandbox)
        #expect(checked.stdout.contains("requires process: may run the programs exec grants (above) through the process service, and no other"), "\(checked)")
        #expect(checked.stdout.contains("requires files: may use the files service, which reaches only what read and write grant"), "\(checked)")
        #expect(!checked.stdout.contains("any file") && !checked.stdout.contains("any program"), "\(checked)")
        #expect(checked.stdout.contains("exec echo: may run echo") && checked.stdout.contains("confined to these permissions as the plugin is"),
                "\(checked)")
    }
}
