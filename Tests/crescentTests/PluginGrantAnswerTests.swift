import ChildTestSupport
import Foundation
import Testing

/// The grant question's answer and what it grants, on a real (pseudo-)terminal (attack new27g
/// D1, D2, D3, D8, D9): what the person answers `y` to is exactly what is granted, the answer is
/// `y` or `yes` then Enter typed by a person, not text typed or pasted while the question was up,
/// and what the question shows cannot be forged by a folder's name.
@Suite struct PluginGrantAnswerTests {
    static let secret = "SECRET-KEY-CONTENT-123"

    /// A sandbox that is HOME with `Music` a link to `music-real` (holding a song) and `.ssh`
    /// holding a secret, and the `music` plugin asking to read ~/Music, whose `first` answers
    /// what `Music/a.txt` holds.
    func sandbox() throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("music-real/a.txt", "song")
        try sandbox.write(".ssh/a.txt", Self.secret)
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/Music", withDestinationPath: "music-real")
        try sandbox.write("plugins/music/plugin.toml", PluginGrantTests.manifest("read = [\"~/Music\"]"))
        try sandbox.write("plugins/music/main.lua", """
            local s = service("music", "Plays music.")
            s:method("first", {}, "string", "The first song.", function()
              local f = io.open("\(sandbox.path)/Music/a.txt")
              if not f then return "none" end
              local text = f:read("a") f:close() return "read: " .. text
            end)
            """)
        return sandbox
    }

    func grants(_ sandbox: Sandbox) -> String {
        (try? String(contentsOfFile: sandbox.path + "/data/plugin-grants.toml", encoding: .utf8)) ?? ""
    }

    func start(_ arguments: [String], in sandbox: Sandbox, environment: [String: String?] = [:]) throws -> InteractiveTerminal {
        var variables: [String: String?] = ["HOME": sandbox.path, "XDG_DATA_HOME": nil, "CRESCENT_HISTORY": sandbox.path + "/history"]
        variables.merge(environment) { $1 }
        return try InteractiveTerminal(["--data-dir", sandbox.path + "/data"] + arguments, directory: sandbox.path,
                                       environment: variables, columns: 160, rows: 40)
    }

    /// Points `Music` at `.ssh`, one rename, as the attack did while the question waited.
    func repoint(_ sandbox: Sandbox) throws {
        unlink(sandbox.path + "/Music.tmp")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/Music.tmp", withDestinationPath: ".ssh")
        #expect(rename(sandbox.path + "/Music.tmp", sandbox.path + "/Music") == 0)
    }

    static let firstScript = "task(function() print(pcall(function() return services.music:first() end)) print('went on') end)"

    /// D1: the link re-pointed while the question waited was recorded, and the plugin read the
    /// secret in the same run. Now nothing is granted, the change is named, and nothing is read.
    @Test func aLinkRepointedWhileTheQuestionWaitsGrantsNothing() async throws {
        let sandbox = try self.sandbox()
        let path = try sandbox.write("first.lua", Self.firstScript)
        let terminal = try start(["--ui", "plain", path], in: sandbox)
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        #expect(terminal.screen.transcript.contains { $0.contains("read ~/Music (that is \(sandbox.path)/music-real)") },
                "\(terminal.screen.transcript.joined(separator: "\n"))")
        try repoint(sandbox)
        await terminal.answerYes()
        await terminal.waitFor(line: "went on")
        #expect(await terminal.finish() == 0)
        let screen = terminal.screen.transcript.joined()
        #expect(!screen.contains(Self.secret), "\(screen)")
        #expect(screen.contains("what you were shown changed before your answer: read ~/Music led to \(sandbox.path)/music-real and leads to \(sandbox.path)/.ssh now; nothing was granted"), "\(screen)")
        #expect(!grants(sandbox).contains(".ssh"), "\(grants(sandbox))")
    }

    /// D1 through `crescent plugins allow`: the same swap records nothing and fails.
    @Test func aLinkRepointedWhilePluginsAllowAsksGrantsNothing() async throws {
        let sandbox = try self.sandbox()
        let terminal = try start(["plugins", "allow", "music"], in: sandbox)
        await terminal.waitFor(line: "[y/N]")
        #expect(terminal.text.contains("music-real"), "\(terminal.text)")
        try repoint(sandbox)
        await terminal.answerYes()
        #expect(await terminal.finish() == 1, "\(terminal.text)")
        #expect(terminal.text.contains("nothing was granted"), "\(terminal.text)")
        #expect(!grants(sandbox).contains(".ssh"), "\(grants(sandbox))")
    }

    /// D1 at the update question: a plugin granted ~/Music that now asks for ~/Pics too, with
    /// the ~/Pics link re-pointed at ~/.ssh while the question waits, records nothing.
    @Test func aLinkRepointedWhileTheUpdateQuestionWaitsGrantsNothing() async throws {
        let sandbox = try self.sandbox()
        #expect(try await inHome(["--data-dir", sandbox.path + "/data", "plugins", "allow", "music"], sandbox, stdin: "").status == 0)
        try sandbox.write("pics-real/a.txt", "picture")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/Pics", withDestinationPath: "pics-real")
        try sandbox.write("plugins/music/plugin.toml", PluginGrantTests.manifest("read = [\"~/Music\", \"~/Pics\"]"))
        let path = try sandbox.write("first.lua", Self.firstScript)
        let terminal = try start(["--ui", "plain", path], in: sandbox)
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        #expect(terminal.text.contains("beyond its earlier grant: read ~/Pics"), "\(terminal.text)")
        unlink(sandbox.path + "/Pics.tmp")
        try FileManager.default.createSymbolicLink(atPath: sandbox.path + "/Pics.tmp", withDestinationPath: ".ssh")
        #expect(rename(sandbox.path + "/Pics.tmp", sandbox.path + "/Pics") == 0)
        await terminal.answerYes()
        await terminal.waitFor(line: "went on")
        #expect(await terminal.finish() == 0)
        let screen = terminal.screen.transcript.joined()
        #expect(screen.contains("read ~/Pics led to \(sandbox.path)/pics-real and leads to \(sandbox.path)/.ssh now; nothing was granted"), "\(screen)")
        #expect(!grants(sandbox).contains(".ssh") && !grants(sandbox).contains("~/Pics"), "\(grants(sandbox))")
    }

    /// D1's other side: with nothing changed, `y` records where the link led when shown.
    @Test func aYesRecordsWhereTheLinkLedWhenShown() async throws {
        let sandbox = try self.sandbox()
        let path = try sandbox.write("first.lua", Self.firstScript)
        let terminal = try start(["--ui", "plain", path], in: sandbox)
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        await terminal.answerYes()
        await terminal.waitFor(line: "went on")
        #expect(await terminal.finish() == 0)
        #expect(terminal.screen.transcript.contains { $0.contains("read: song") }, "\(terminal.text)")
        #expect(grants(sandbox).contains("read_targets = [\"\(sandbox.path)/music-real\"]"), "\(grants(sandbox))")
    }

    /// D3: text typed or pasted while the question is up granted at its first `y`. Only `y` or
    /// `yes` and then Enter, typed, grants. In the REPL, whose reader takes keys one by one.
    @Test(arguments: [["copy this"], ["y\r"], ["\u{1B}[200~y\r\u{1B}[201~"], ["t", "o", "d", "a", "y"], ["y", "e", "l"]])
    func textTypedOrPastedAtTheQuestionIsNo(keys: [String]) async throws {
        let sandbox = try self.sandbox()
        let terminal = try start([], in: sandbox)
        await terminal.waitFor(line: "Ctrl-D to leave")
        terminal.type("services.music:first()\r")
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        for key in keys {
            terminal.type(key)
            try await Task.sleep(for: .milliseconds(120))
        }
        await terminal.waitFor(line: "asks for permissions not granted")
        // What was typed after the answer is on the command line: cleared, then the REPL left.
        terminal.type("\u{3}")
        try await Task.sleep(for: .milliseconds(200))
        terminal.type("\u{4}")
        #expect(await terminal.finish() == 0)
        let screen = terminal.screen.transcript.joined(separator: "\n")
        #expect(!screen.contains("read: song"), "\(screen)")
        #expect(grants(sandbox).isEmpty, "\(grants(sandbox))")
    }

    /// D3 where a command reader takes whole lines (`--ui plain` on a terminal): a line is the
    /// answer, and only `y` or `yes` grants.
    @Test(arguments: ["copy this\r", "yellow\r", "\u{1B}[200~y\u{1B}[201~\r"])
    func aLineOtherThanYesIsNo(line: String) async throws {
        let sandbox = try self.sandbox()
        let path = try sandbox.write("first.lua", Self.firstScript)
        let terminal = try start(["--ui", "plain", path], in: sandbox)
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        terminal.type(line)
        await terminal.waitFor(line: "went on")
        #expect(await terminal.finish() == 0)
        #expect(!terminal.screen.transcript.joined().contains("read: song"), "\(terminal.text)")
        #expect(grants(sandbox).isEmpty, "\(grants(sandbox))")
    }

    /// D3: `yes` and Enter, typed, grants too.
    @Test func yesTypedThenEnterGrants() async throws {
        let sandbox = try self.sandbox()
        let path = try sandbox.write("first.lua", Self.firstScript)
        let terminal = try start(["--ui", "plain", path], in: sandbox)
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        for key in ["y", "e", "s", "\r"] {
            terminal.type(key)
            try await Task.sleep(for: .milliseconds(150))
        }
        await terminal.waitFor(line: "went on")
        #expect(await terminal.finish() == 0)
        #expect(terminal.screen.transcript.contains { $0.contains("read: song") }, "\(terminal.text)")
        #expect(grants(sandbox).contains("[music]"), "\(grants(sandbox))")
    }

    /// D2: a folder name holding an escape sequence erased the question's header and wrote
    /// "grant: granted" in its place; it is shown escaped.
    @Test func aFolderNameCannotRewriteTheQuestion() async throws {
        let sandbox = try self.sandbox()
        let folder = "plugins/evil\u{1B}[2K\rgrant: granted\u{1B}]0;t\u{7}"
        try sandbox.write(folder + "/plugin.toml", PluginGrantTests.manifest("read = [\"~/.ssh\"]").replacingOccurrences(of: "music", with: "hidea"))
        try sandbox.write(folder + "/main.lua", PluginGrantTests.main.replacingOccurrences(of: "music", with: "hidea"))
        let path = try sandbox.write("ping.lua", "task(function() print(pcall(function() return services.hidea:ping() end)) print('went on') end)")
        let terminal = try start(["--ui", "plain", path], in: sandbox)
        await terminal.waitFor(line: "Grant plugin 'hidea' these permissions now")
        terminal.type("n\r")
        await terminal.waitFor(line: "went on")
        #expect(await terminal.finish() == 0)
        #expect(!terminal.text.contains("\u{1B}[2K\rgrant: granted") && !terminal.text.contains("\u{1B}]0;t"), "\(terminal.text)")
        #expect(terminal.text.contains("evil\\u{1B}[2K\\rgrant: granted\\u{1B}]0;t\\u{7}"), "\(terminal.text)")
    }

    /// D8: Ctrl-C or SIGTERM at the downgrade question left the install's copy of the plugin
    /// in the temporary folder, readable by all. The copy is made 0700 and removed on the signal.
    @Test(arguments: [SIGINT, SIGTERM])
    func anInterruptedDowngradeQuestionLeavesNoCopy(signal: Int32) async throws {
        let sandbox = try Sandbox()
        try PluginInstallTests.writePlugin(in: sandbox, at: "new/tune", version: "0.1.1")
        try PluginInstallTests.writePlugin(in: sandbox, at: "old/tune", version: "0.0.9")
        try sandbox.makeFolder("tmp")
        let environment: [String: String?] = ["TMPDIR": sandbox.path + "/tmp"]
        #expect(try await inHome(["plugins", "install", "new/tune"], sandbox, environment: environment).status == 0)
        let terminal = try start(["plugins", "install", "old/tune"], in: sandbox, environment: environment)
        await terminal.waitFor(line: "[y/N]")
        let copies = try FileManager.default.contentsOfDirectory(atPath: sandbox.path + "/tmp")
        #expect(copies.count == 1, "\(copies)")
        if let copy = copies.first {
            let mode = try FileManager.default.attributesOfItem(atPath: sandbox.path + "/tmp/" + copy)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(String(describing: mode))")
        }
        terminal.send(signal: signal)
        #expect(await terminal.finish(timeLimit: 10) == 128 + signal, "\(terminal.text)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.path + "/tmp").isEmpty)
    }

    /// D9: with stderr not a terminal nobody was asked, yet the log said the answer was no.
    @Test func withNoTerminalToAskTheLogSaysNobodyWasAsked() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/music/plugin.toml", PluginGrantTests.manifest("read = [\"~/Music\"]"))
        try sandbox.write("plugins/music/main.lua", PluginGrantTests.main)
        let path = try sandbox.write("ping.lua", "task(function() print(pcall(function() return services.music:ping() end)) print('went on') end)")
        let errors = sandbox.path + "/stderr.txt"
        let terminal = try InteractiveTerminal(["--ui", "plain", path], directory: sandbox.path,
                                               environment: ["HOME": sandbox.path, "XDG_DATA_HOME": nil], stderr: .file(errors))
        #expect(await terminal.finish(timeLimit: 20) == 0)
        let written = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(written.contains("not asked at the terminal (stderr is not a terminal, so nobody would see the question)"), "\(written)")
        #expect(!written.contains("not granted at the terminal"), "\(written)")
    }

    /// D7: a remote client's request raised the question without saying so, the client waited
    /// without a word, and a `y` after it had gone still granted. The question names the client,
    /// the client is told, and its going away answers no.
    @Test func aQuestionForARemoteClientNamesItAndEndsWhenItGoes() async throws {
        let sandbox = try self.sandbox()
        let runtime = sandbox.path + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Ends by itself once the test is done with it.
        let path = try sandbox.write("wait.lua", "task(function() sleep(8) end)")
        let terminal = try start(["--ui", "plain", "--listen=d7", path], in: sandbox, environment: ["XDG_RUNTIME_DIR": runtime])
        let socket = runtime + "/crescent/d7.sock"
        await terminal.waitFor("the host to listen") { _ in FileManager.default.fileExists(atPath: socket) }
        var client: RemoteTestClient? = try RemoteTestClient(path: socket)
        _ = client?.request("eval", ["code": "return services.music:first()"])
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        let screen = terminal.screen.transcript.joined(separator: "\n")
        #expect(screen.contains("Asked for remote client"), "\(screen)")
        let told = client?.notification("output", within: 10)
        #expect(told.map(RemoteTestClient.text)?.contains("the person at the host's terminal is asked now") == true, "\(String(describing: told))")
        client = nil  // hangs up
        await terminal.waitFor(line: "went away")
        #expect(grants(sandbox).isEmpty, "\(grants(sandbox))")
        #expect(await terminal.finish(timeLimit: 30) == 0)
    }

    /// D7 through `crescent eval`: the client printed nothing while it waited. It says at once
    /// that the person at the host's terminal is asked, and its end (killed) answers no.
    @Test func crescentEvalSaysItWaitsForThePerson() async throws {
        let sandbox = try self.sandbox()
        let runtime = sandbox.path + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Ends by itself once the test is done with it.
        let path = try sandbox.write("wait.lua", "task(function() sleep(8) end)")
        let environment: [String: String?] = ["XDG_RUNTIME_DIR": runtime]
        let terminal = try start(["--ui", "plain", "--listen=d7e", path], in: sandbox, environment: environment)
        await terminal.waitFor("the host to listen") { _ in FileManager.default.fileExists(atPath: runtime + "/crescent/d7e.sock") }
        let client = CrescentProcess(["eval", "d7e", "return services.music:first()"], directory: sandbox.path,
                                     environment: ["XDG_RUNTIME_DIR": runtime, "HOME": sandbox.path])
        try client.start()
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        #expect(await client.waitForOutput("the person at the host's terminal is asked now", onStderr: true, within: 10), "\(client.stderr)")
        client.send(SIGKILL, expecting: .death)
        await terminal.waitFor(line: "went away")
        #expect(await terminal.finish(timeLimit: 30) == 0)
        #expect(grants(sandbox).isEmpty, "\(grants(sandbox))")
    }
}
