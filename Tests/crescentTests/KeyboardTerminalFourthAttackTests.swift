import ChildTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the fourth attack on the terminal found, each on a real pseudo-terminal: the terminal
/// left raw when an exit raced the normal teardown (D1); held output replayed raw after the
/// restore (D2); a frame written after the restore (D4); `kill -INT` lost while a key ran
/// `os.execute` (D5); a long key help replaced by the method's name (D6); a remote `q` logged as
/// a call of `app.exit` (D7). D3, a job that could not end, is a shell's: in
/// ``KeyboardTerminalFourthAttackJobTests``.
@Suite struct KeyboardTerminalFourthAttackTests {
    /// `s` waits in `os.execute` (a program that runs long), after creating the file `started`;
    /// `p` prints control sequences and `e` raises an error holding some.
    static let source = #"""
        local C = controller("Fourth")
        function C:loadView() return view.stack { view.text { id = "title", text = "pressed: none" } } end
        function C:viewDidLoad()
          self:key("s", "slow", "sleep")
          self:key("p", "evil", "print")
          self:key("e", "fail", "error")
        end
        function C:slow()
          io.open("started", "w"):close()
          os.execute("sleep 30")
        end
        function C:evil()
          print("evil \27[?1049h|\27]0;pwn\7|\27[31mred\27[0m|end")
          self.view.title.text = "pressed: p"
        end
        function C:fail() error("boom \27[?1049h|\27[2J|end") end
        app.push(C)
        """#

    private func start(_ source: String = Self.source, showing: String = "pressed: none") async throws -> (InteractiveTerminal, Sandbox) {
        try await InteractiveTerminal.app(source, file: "fourth.lua", showing: showing)
    }

    /// Starts `s` (a key handler waiting in `os.execute`) and returns once it runs.
    private func startSlowKey() async throws -> (InteractiveTerminal, Sandbox) {
        let (terminal, sandbox) = try await start()
        terminal.type("s")
        await terminal.waitUntilStarted(sandbox)
        return (terminal, sandbox)
    }

    /// Expects the terminal given back once (one `ESC [?1049l`), and nothing of a frame written
    /// after that (synchronized-output marks, the cursor hidden, a row's position).
    private func expectGivenBackOnce(_ terminal: InteractiveTerminal, sourceLocation: SourceLocation = #_sourceLocation) {
        let parts = terminal.text.components(separatedBy: "\u{1B}[?1049l")
        #expect(parts.count == 2, "given back \(parts.count - 1) times", sourceLocation: sourceLocation)
        let after = parts.dropFirst().joined(separator: "\u{1B}[?1049l")
        #expect(!after.contains("\u{1B}[?2026h") && !after.contains("\u{1B}[?25l") && !after.contains(";1H"),
                "a frame after the terminal was given back: \(after.debugDescription)", sourceLocation: sourceLocation)
    }

    /// How many times the races below are run (each was lost one time in a few), in rounds of
    /// how many at once (the load of a few apps at once is what lost them).
    static let rounds = 2, together = 6

    /// Runs `body` ``rounds`` x ``together`` times, each on a terminal of its own.
    private func race(_ body: @escaping @Sendable () async throws -> Void) async throws {
        for _ in 0..<Self.rounds {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<Self.together { group.addTask(operation: body) }
                try await group.waitForAll()
            }
        }
    }

    /// D1: a second ctrl-c while a key's handler waited in `os.execute` ended the app past its
    /// grace period from the stop thread while the loop, woken by the kill of the program, was
    /// giving the terminal back: the exit came between the two, and the terminal stayed raw (3
    /// of 12 tries). Whoever restores first does it whole, and an exit waits for a restore under
    /// way.
    @Test func aSecondCtrlCInOsExecuteAlwaysGivesTheTerminalBack() async throws {
        try await race {
            let (terminal, sandbox) = try await startSlowKey()
            defer { withExtendedLifetime(sandbox) {} }
            // Past the half second after which a ctrl-c stops a handler rather than quits.
            try await Task.sleep(for: .milliseconds(800))
            terminal.type("\u{3}")
            try await Task.sleep(for: .milliseconds(300))
            terminal.type("\u{3}")
            #expect(await terminal.finish(timeLimit: 30) == 130)
            terminal.expectRestored()
            expectGivenBackOnce(terminal)
        }
    }

    /// D4: after the terminal was given back (the stop thread's exit past the grace period of a
    /// SIGTERM, while a key waited in `os.execute`), the loop still wrote a frame: a status line
    /// on the shell's screen. Nothing is drawn once the terminal is given back.
    @Test func noFrameIsWrittenAfterTheTerminalIsGivenBack() async throws {
        try await race {
            let (terminal, sandbox) = try await startSlowKey()
            defer { withExtendedLifetime(sandbox) {} }
            try await Task.sleep(for: .milliseconds(300))
            terminal.send(signal: SIGTERM)
            #expect(await terminal.finish(timeLimit: 30) == 143)
            terminal.expectRestored()
            expectGivenBackOnce(terminal)
        }
    }

    /// D5: `kill -INT` while a key's handler waited in `os.execute` was lost (os.execute ignores
    /// SIGINT in the host, for a Ctrl-C the terminal sends its program too; in raw mode the
    /// terminal sends none): the app ran on. It ends the run as SIGINT does elsewhere.
    @Test func killIntWhileAKeyWaitsInOsExecuteEndsTheApp() async throws {
        let (terminal, sandbox) = try await startSlowKey()
        defer { withExtendedLifetime(sandbox) {} }
        try await Task.sleep(for: .milliseconds(300))
        terminal.send(signal: SIGINT)
        #expect(await terminal.finish(timeLimit: 20) == 130)
        terminal.expectRestored()
    }

    /// D2: what the app printed while its view was up was written out after the restore byte
    /// for byte: an `ESC [?1049h` in data put the shell back on the alternate screen, an OSC
    /// retitled the window. On the terminal its control characters are written as escapes, as
    /// the view and `--ui plain` write them; plain colours (SGR) are kept.
    @Test func heldOutputIsEscapedOnTheTerminal() async throws {
        let (terminal, _) = try await start()
        terminal.type("p")
        await terminal.waitFor(line: "pressed: p")
        terminal.type("e")
        await terminal.waitFor(line: "error in Fourth:fail")
        terminal.type("q")
        #expect(await terminal.finish() == 1)
        terminal.expectRestored()
        let after = terminal.writtenAfterRestore
        #expect(after.contains(#"evil \u{1B}[?1049h|\u{1B}]0;pwn\u{7}|"#), "\(after.debugDescription)")
        #expect(after.contains("\u{1B}[31mred\u{1B}[0m|end"), "plain colours kept: \(after.debugDescription)")
        #expect(after.contains(#"boom \u{1B}[?1049h|\u{1B}[2J|end"#), "\(after.debugDescription)")
        #expect(!after.contains("\u{1B}[?1049h") && !after.contains("\u{1B}]0;") && !after.contains("\u{1B}[2J"), "\(after.debugDescription)")
    }

    /// D2: held output that goes to a file (stderr redirected) is written byte for byte.
    @Test func heldOutputToAFileIsKeptByteForByte() async throws {
        let sandbox = try Sandbox()
        let path = try sandbox.write("fourth.lua", Self.source)
        let log = sandbox.path + "/stderr.log"
        let terminal = try InteractiveTerminal(["--data-dir", sandbox.path + "/data", "--no-plugins", path], directory: sandbox.path,
                                               environment: ["CRESCENT_HISTORY": sandbox.path + "/history"], columns: 100, rows: 12,
                                               stderr: .file(log))
        await terminal.waitFor(line: "pressed: none")
        terminal.type("e")
        await terminal.waitFor(line: "error in Fourth:fail")
        terminal.type("q")
        #expect(await terminal.finish() == 1)
        terminal.expectRestored()
        let written = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(written.contains("boom \u{1B}[?1049h|\u{1B}[2J|end"), "\(written.debugDescription)")
    }

    /// D6: a key's help longer than 16 characters was replaced by its method's name on the
    /// status line. The help shows; one too long for the room left is cut with an ellipsis.
    @Test func aLongKeyHelpIsShownAndCutToTheRoom() async throws {
        let long = "append a line to the end of the list, then scroll the list down to it and select it for editing at once"
        let source = """
            local C = controller("Helps")
            function C:loadView() return view.text { text = "helps view" } end
            function C:viewDidLoad()
              self:key("x", "remove", "delete the selected grocery item")
              self:key("y", "append", "\(long)")
            end
            function C:remove() end
            function C:append() end
            app.push(C)
            """
        let (terminal, _) = try await start(source, showing: "helps view")
        await terminal.waitFor("the hints") { lines in lines.last?.hasPrefix("x ") == true }
        let status = terminal.screen.lines.last ?? ""
        #expect(status.hasPrefix("x delete the selected grocery item  y append a line"), "\(status)")
        #expect(status.contains("…") && !status.contains(" remove") && !status.contains("y append  "), "\(status)")
        terminal.type("?")
        await terminal.waitFor(line: "keys of Helps")
        let help = terminal.screen.lines
        #expect(help.contains { $0.hasPrefix("  x ") && $0.hasSuffix(" delete the selected grocery item") }, "\(help)")
        #expect(help.contains { $0.hasPrefix("  y ") && $0.contains(" append a line to the end") && $0.hasSuffix("…") }, "\(help)")
        terminal.type("x")
        await terminal.waitFor("the help closed") { lines in !lines.contains { $0.contains("keys of Helps") } }
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }

    /// D7: a remote client's `q` (the `key` method, `crescent send --key q`) was logged as
    /// "remote client 1 called app.exit(0): the host exits". A quit by key is a normal quit.
    @Test func aRemoteQIsANormalQuit() async throws {
        for viaCommandLine in [false, true] {
            let name = viaCommandLine ? "fq2" : "fq1"
            let (terminal, sandbox, socket) = try await InteractiveTerminal.app(Self.source, file: "fourth.lua", listening: name,
                                                                                showing: "pressed: none")
            if viaCommandLine {
                let sent = try await crescent(["send", name, "--key", "q"], in: sandbox, environment: ["XDG_RUNTIME_DIR": sandbox.path + "/run"])
                #expect(sent.status == 0, "\(sent)")
            } else {
                let client = try RemoteTestClient(path: socket)
                let answered = await Task.detached { client.call("key", ["keys": ["q"]], within: 15)?["result"] != nil }.value
                #expect(answered, "the key request answered")
            }
            #expect(await terminal.finish() == 0)
            terminal.expectRestored()
            #expect(!terminal.text.contains("called app.exit"), "\(terminal.writtenAfterRestore.debugDescription)")
        }
    }
}
