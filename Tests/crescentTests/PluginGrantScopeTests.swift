import Foundation
import Testing

/// What a grant covers and how a request is shown, without a terminal (attack new27g D2, D4,
/// D5, D6): folder names shown escaped in `crescent plugins` and `plugin check`, a long
/// request summarised with its sensitive places first, a restarted process plugin held to the
/// manifest it restarts from, and one grant per plugin folder.
@Suite struct PluginGrantScopeTests {
    /// D2: a cloned project's plugin folder name reached the terminal raw in the listing and in
    /// `plugin check`.
    @Test func folderNamesAreShownEscapedInTheListingAndCheck() async throws {
        let sandbox = try Sandbox()
        let name = "evil\u{1B}[2K\rgrant: granted\u{1B}]0;t\u{7}\nsecond line\u{202E}"
        try sandbox.write("plugins/\(name)/plugin.toml", PluginGrantTests.manifest("read = [\"~/.ssh\"]"))
        try sandbox.write("plugins/\(name)/main.lua", PluginGrantTests.main)
        let listed = try await inHome(["plugins"], sandbox)
        #expect(listed.status == 0, "\(listed)")
        let checked = try await inHome(["plugin", "check", "plugins/\(name)"], sandbox)
        for result in [listed, checked] {
            #expect(!result.stdout.contains("\u{1B}") && !result.stdout.contains("\r") && !result.stdout.contains("\u{202E}"), "\(result)")
            #expect(result.stdout.contains("evil\\u{1B}[2K\\rgrant: granted\\u{1B}]0;t\\u{7}\\nsecond line\\u{202E}"), "\(result)")
        }
        #expect(!listed.stdoutLines.contains { $0.hasPrefix("second line") }, "a name's newline split its row: \(listed)")
    }

    /// A manifest reading 200 folders with ~/.ssh among them.
    static func longRequest(in sandbox: Sandbox) throws {
        var entries = (0..<200).map { "\"~/Music/d\($0)\"" }
        entries.insert("\"~/.ssh\"", at: 100)
        try sandbox.write("plugins/music/plugin.toml", PluginGrantTests.manifest("read = [\(entries.joined(separator: ", "))]"))
        try sandbox.write("plugins/music/main.lua", PluginGrantTests.main)
    }

    /// D4: a long request showed its last screenful only, ~/.ssh scrolled away. It opens with
    /// the counts and the sensitive places; `plugins allow` shows its first entries and where
    /// to read them all, `plugin check` shows them all after the summary.
    @Test func aLongRequestNamesItsSensitivePlacesFirst() async throws {
        let sandbox = try Sandbox()
        try Self.longRequest(in: sandbox)
        let allowed = try await inHome(["plugins", "allow", "music"], sandbox, stdin: "")
        #expect(allowed.status == 0, "\(allowed)")
        let lines = allowed.stdoutLines
        #expect(lines.count < 24, "\(allowed)")
        #expect(lines.contains("  in all: 201 read entries"), "\(allowed)")
        let sensitive = lines.firstIndex { $0.contains("the places that matter most (1):") }
        let ssh = lines.firstIndex { $0.contains("read ~/.ssh: may read the files in ~/.ssh") }
        #expect(sensitive != nil && ssh == sensitive.map { $0 + 1 }, "\(allowed)")
        #expect(allowed.stdout.contains("… and 196 more: crescent plugin check \(sandbox.path)/plugins/music lists them all")
                || allowed.stdout.contains("more: crescent plugin check"), "\(allowed)")
        let checked = try await inHome(["plugin", "check", "plugins/music"], sandbox)
        #expect(checked.stdout.contains("the places that matter most (1):"), "\(checked)")
        #expect(checked.stdoutLines.filter { $0.contains("read ~/Music/d") }.count == 200, "\(checked)")
        #expect(checked.stdoutLines.firstIndex { $0.contains("read ~/.ssh") } ?? 99 < 6, "\(checked)")
    }

    /// D6: granting a same-name copy in another folder revoked the first folder's grant, and
    /// `plugins remove` deleted the grant of another folder's plugin.
    @Test func eachFolderKeepsItsOwnGrant() async throws {
        let sandbox = try Sandbox()
        for folder in ["p/music", "q/music"] {
            try sandbox.write("\(folder)/plugin.toml", PluginGrantTests.manifest("read = [\"~/Music\"]"))
            try sandbox.write("\(folder)/main.lua", PluginGrantTests.main)
        }
        for folder in ["p/music", "q/music"] {
            let allowed = try await inHome(["--plugin", folder, "plugins", "allow", "music"], sandbox, stdin: "")
            #expect(allowed.status == 0, "\(allowed)")
        }
        let ping = "task(function() print(pcall(function() return services.music:ping() end)) end)"
        for folder in ["p/music", "q/music"] {
            let ran = try await inHome(["--plugin", folder, "-e", ping], sandbox)
            #expect(ran.stdout.contains("pong"), "\(folder): \(ran)")
        }
        // An installed plugin and a project's copy of it, both granted: removing the installed
        // one keeps the copy's grant.
        try PluginInstallTests.writePlugin(in: sandbox, at: "src/tune")
        try PluginInstallTests.writePlugin(in: sandbox, at: "copy/tune")
        #expect(try await inHome(["plugins", "install", "src/tune"], sandbox).status == 0)
        #expect(try await inHome(["plugins", "allow", "tune"], sandbox, stdin: "").status == 0)
        #expect(try await inHome(["--plugin", "copy/tune", "plugins", "allow", "tune"], sandbox, stdin: "").status == 0)
        let removed = try await inHome(["plugins", "remove", "tune"], sandbox)
        #expect(removed.status == 0, "\(removed)")
        let listed = try await inHome(["--plugin", "copy/tune", "plugins"], sandbox)
        #expect(listed.stdoutLines.contains { $0.hasPrefix("tune") && $0.contains("copy/tune") && $0.contains(" granted ") }, "\(listed)")
    }

    /// A grants file written before grants were kept per folder (one section per name) still
    /// holds: its section reads as the grant of the folder it names.
    @Test func aGrantsFileWithOneSectionPerNameStillHolds() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("p/music/plugin.toml", PluginGrantTests.manifest("read = [\"~/Music\"]"))
        try sandbox.write("p/music/main.lua", PluginGrantTests.main)
        #expect(try await inHome(["--plugin", "p/music", "plugins", "allow", "music"], sandbox, stdin: "").status == 0)
        let grants = try String(contentsOfFile: sandbox.path + "/.local/share/crescent/plugin-grants.toml", encoding: .utf8)
        #expect(grants.contains("\n[music]\n") && !grants.contains("music-2"), "\(grants)")
        let ran = try await inHome(["--plugin", "p/music", "-e", "task(function() print(services.music:ping()) end)"], sandbox)
        #expect(ran.stdout.contains("pong"), "\(ran)")
    }

    /// D5: a process plugin whose files changed while it ran, to a version asking for more than
    /// granted, restarted as the new program after its exit. It is refused as at a start.
    @Test func aRestartAfterAnUpdateAskingForMoreIsRefused() async throws {
        let sandbox = try Sandbox()
        let folder = sandbox.path + "/plugins/proc"
        func manifest(_ version: String, _ permissions: String) -> String {
            """
            name = "proc"
            version = "\(version)"
            crescent = ">=0.1.0"
            kind = "process"
            services = ["proc"]
            command = ["python3", "main.py"]

            [permissions]
            \(permissions)
            """
        }
        func program(_ version: String) -> String {
            PluginTestPython.loop(
                declaration: #"{"services": [{"name": "proc", "summary": "Says.", "methods": [{"name": "ver", "args": [], "returns": "string", "doc": "Its version."}, {"name": "quit", "args": [], "returns": "string", "doc": "Exits."}]}]}"#,
                calls: """
                    if name == "quit":
                        sys.exit(0)
                    send({"jsonrpc": "2.0", "id": id, "result": "ver \(version)"})
                """)
        }
        try sandbox.write("plugins/proc/plugin.toml", manifest("1.0.0", ""))
        try sandbox.write("plugins/proc/main.py", program("1.0.0"))
        let update = try sandbox.write("update/plugin.toml", manifest("2.0.0", "read = [\"~/.ssh\"]"))
        let updateProgram = try sandbox.write("update/main.py", program("2.0.0"))
        let result = try await inHome(["-e", """
            task(function()
              print(services.proc:ver())
              local function copy(from, to)
                local text = assert(io.open(from)):read("a")
                local out = assert(io.open(to, "w")) out:write(text) out:close()
              end
              copy("\(update)", "\(folder)/plugin.toml")
              copy("\(updateProgram)", "\(folder)/main.py")
              pcall(function() return services.proc:quit() end)
              sleep(0.5)
              print(pcall(function() return services.proc:ver() end))
            end)
            """], sandbox, timeLimit: 40)
        #expect(result.stdout.contains("ver 1.0.0"), "\(result)")
        #expect(!result.stdout.contains("ver 2.0.0"), "the updated program ran: \(result)")
        #expect(result.stdout.contains("changed since it started to 2.0.0, which asks for more than was granted (read ~/.ssh)"), "\(result)")
    }
}
