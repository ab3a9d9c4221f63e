import ChildTestSupport
import Foundation
import Testing

/// DESIGN.md (Plugins › Permissions): "on a terminal the first touch asks y/n". A plugin whose
/// permissions are not granted, touched by a script run, the REPL or a controller app on a real
/// (pseudo-)terminal, shows what it asks and waits for the answer: `y` and Enter records the grant
/// (as `crescent plugins allow` would) and the call goes on; `n` refuses it as without a terminal.
@Suite struct PluginGrantQuestionTests {
    /// A sandbox that is HOME, with the `music` plugin asking to read ~/Music.
    func sandbox() throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("plugins/music/plugin.toml", PluginGrantTests.manifest("read = [\"~/Music\"]"))
        try sandbox.write("plugins/music/main.lua", PluginGrantTests.main)
        return sandbox
    }

    func grants(_ sandbox: Sandbox) -> String {
        (try? String(contentsOfFile: sandbox.path + "/data/plugin-grants.toml", encoding: .utf8)) ?? ""
    }

    func start(_ arguments: [String], in sandbox: Sandbox, stderr: TestChild.Stream? = nil) throws -> InteractiveTerminal {
        try InteractiveTerminal(["--data-dir", sandbox.path + "/data"] + arguments, directory: sandbox.path,
                                environment: ["HOME": sandbox.path, "XDG_DATA_HOME": nil, "CRESCENT_HISTORY": sandbox.path + "/history"],
                                columns: 120, rows: 30, stderr: stderr)
    }

    /// Types `touch`, answers `y` at the question, and waits for `result`.
    func grant(_ terminal: InteractiveTerminal, typing touch: String, thenSee result: String) async {
        terminal.type(touch)
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        await terminal.answerYes()
        await terminal.waitFor(line: result)
    }

    /// Ends the run with `key` (none: it ends by itself) and checks it exited 0 with the grant recorded.
    func expectGrantRecorded(_ terminal: InteractiveTerminal, in sandbox: Sandbox, endingWith key: String? = nil) async {
        if let key { terminal.type(key) }
        #expect(await terminal.finish() == 0)
        #expect(grants(sandbox).contains("[music]"), "\(grants(sandbox))")
    }

    @Test func aScriptOnATerminalAsksAndAYesGrantsAndGoesOn() async throws {
        let sandbox = try self.sandbox()
        let path = try sandbox.write("ping.lua", "task(function() print('answer: ' .. services.music:ping()) end)")
        let terminal = try start(["--ui", "plain", path], in: sandbox)
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        #expect(terminal.screen.transcript.contains { $0.contains("read ~/Music: may read the files in ~/Music") })
        #expect(grants(sandbox).isEmpty, "nothing is recorded before the answer")
        await terminal.answerYes()
        await terminal.waitFor(line: "answer: pong")
        #expect(await terminal.finish() == 0)
        #expect(grants(sandbox).contains("[music]") && grants(sandbox).contains("read = [\"~/Music\"]"), "\(grants(sandbox))")
    }

    @Test func aNoRefusesAsWithoutATerminalAndRecordsNothing() async throws {
        let sandbox = try self.sandbox()
        let path = try sandbox.write("ping.lua", "task(function() print(pcall(function() return services.music:ping() end)) print('went on') end)")
        let terminal = try start(["--ui", "plain", path], in: sandbox)
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        terminal.type("n\r")
        await terminal.waitFor(line: "went on")
        let screen = terminal.screen.transcript.joined()
        #expect(screen.contains("false/") && screen.contains("services.music cannot start: permission: plugin 'music' asks for permissions"), "\(screen)")
        #expect(await terminal.finish() == 0)
        #expect(grants(sandbox).isEmpty, "\(grants(sandbox))")
    }

    /// Second permissions attack D7: with stdin on the terminal but stderr redirected, the
    /// question would be invisible and a blind key would grant: nothing is asked, the plugin is
    /// refused as without a terminal, and the run does not wait for a key.
    @Test func withStderrRedirectedNothingIsAskedAndTheRunDoesNotWait() async throws {
        let sandbox = try self.sandbox()
        let path = try sandbox.write("ping.lua", "task(function() print(pcall(function() return services.music:ping() end)) print('went on') end)")
        let errors = sandbox.path + "/stderr.txt"
        let terminal = try start(["--ui", "plain", path], in: sandbox, stderr: .file(errors))
        // No key is typed: a run that waited for one (a question gives up after 2 minutes) would
        // end only by the kill at this limit, not with status 0. (A bound on the elapsed time
        // added nothing but failures when make test's parallel phase starved the run.)
        #expect(await terminal.finish(timeLimit: 20) == 0, "the run waited for a key")
        let screen = terminal.screen.transcript.joined(separator: "\n")
        #expect(screen.contains("false") && screen.contains("services.music cannot start: permission: plugin 'music' asks for permissions"), "\(screen)")
        #expect(screen.contains("went on"), "\(screen)")
        let written = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(!written.contains("Grant plugin") && !screen.contains("Grant plugin"), "\(written)\n\(screen)")
        #expect(grants(sandbox).isEmpty, "\(grants(sandbox))")
    }

    /// Third permissions attack L: the question for a plugin that another plugin's method
    /// touches waited while that method's `call_timeout` ran, so a `y` after a few seconds
    /// recorded the grant and the call it was for still answered `timeout`. The wait for the
    /// person is not counted (the loop, the call and the plugin all waited on it).
    @Test func theTimeAPersonTakesToAnswerDoesNotCountAgainstTheCallersTimeLimit() async throws {
        let sandbox = try self.sandbox()
        try sandbox.write("plugins/caller/plugin.toml", """
            name = "caller"
            version = "1.0.0"
            crescent = ">=0.1.0"
            kind = "lua"
            services = ["caller"]
            requires = ["music"]
            """)
        try sandbox.write("plugins/caller/main.lua", """
            local s = service("caller", "Asks music.")
            s:method("go", {}, "string", "Asks music.", function() return "music said " .. services.music:ping() end)
            """)
        try sandbox.write("crescent.toml", "[plugins]\ncall_timeout = 1\n")
        let path = try sandbox.write("go.lua", """
            task(function()
              local ok, answer = pcall(function() return services.caller:go() end)
              print(ok and answer or ("failed: " .. tostring(answer)))
              local ok2, again = pcall(function() return services.caller:go() end)
              print("again: " .. tostring(again))
            end)
            """)
        let terminal = try start(["--ui", "plain", path], in: sandbox)
        await terminal.waitFor(line: "Grant plugin 'music' these permissions now")
        // Three times the caller's time limit, as a person reading the question takes.
        try await Task.sleep(for: .seconds(3))
        await terminal.answerYes()
        await terminal.waitFor(line: "again: music said pong")
        let screen = terminal.screen.transcript.joined(separator: "\n")
        #expect(screen.contains("music said pong") && !screen.contains("failed:") && !screen.contains("timeout"), "\(screen)")
        #expect(await terminal.finish() == 0)
        #expect(grants(sandbox).contains("[music]"), "\(grants(sandbox))")
    }

    @Test func theReplAsksWhileALineRuns() async throws {
        let sandbox = try self.sandbox()
        let terminal = try start([], in: sandbox)
        await terminal.waitFor(line: "Ctrl-D to leave")
        await grant(terminal, typing: "services.music:ping()\r", thenSee: "\"pong\"")
        await expectGrantRecorded(terminal, in: sandbox, endingWith: "\u{4}")
    }

    @Test func aControllerAppAsksOverItsViewAndDrawsItAgain() async throws {
        let sandbox = try self.sandbox()
        let path = try sandbox.write("app.lua", """
            local C = controller("Music")
            function C:loadView() return view.stack { view.text { id = "said", text = "said: nothing" } } end
            function C:viewDidLoad() self:key("p", "ping", "ask the plugin") self:key("q", "leave", "quit") end
            function C:ping() self.view.said.text = "said: " .. services.music:ping() end
            function C:leave() app.exit(0) end
            app.push(C)
            """)
        let terminal = try start([path], in: sandbox)
        await terminal.waitFor(line: "said: nothing")
        await grant(terminal, typing: "p", thenSee: "said: pong")
        await expectGrantRecorded(terminal, in: sandbox, endingWith: "q")
    }
}
