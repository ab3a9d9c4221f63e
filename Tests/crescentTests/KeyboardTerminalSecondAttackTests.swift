import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the second attack on the terminal (new26k) found, each on a real pseudo-terminal: a
/// SIGTSTP from outside (D1); a remote key typed into the person's half-typed command line (D2);
/// ctrl-z over the `?` help (D3); a memory error in a key's handler blamed on the prelude (D4);
/// an error and a print before the first frame (D5, D6).
@Suite struct KeyboardTerminalSecondAttackTests {
    /// `j` changes the view, `a` opens the command line with `add ` typed, `m` uses more memory
    /// than a run of `--memory-limit 60` has; `add ITEM` shows the item.
    static let source = """
        local C = controller("Attack")
        function C:loadView() return view.stack { view.text { id = "title", text = "pressed: none" } } end
        function C:viewDidLoad()
          self:key("j", "pressJ", "say j")
          self:key("a", "startAdd", "add")
          self:key("m", "bomb", "use memory")
          self:command("add", "add", "add ITEM", { args = { "item: string" } })
          self:command("hog", "hog", "use memory")
        end
        function C:pressJ() self.view.title.text = "pressed: j" end
        function C:startAdd() app.commandLine("add ") end
        function C:add(item) self.view.title.text = "added: " .. item end
        function C:bomb()
          local t = {}
          for i = 1, 1e9 do t[i] = string.rep("x", 1000) .. i end
        end
        function C:hog() self:bomb() end
        app.push(C)
        """

    /// How many times the program wrote `sequence` so far.
    private func count(_ sequence: String, in terminal: InteractiveTerminal) -> Int {
        terminal.text.components(separatedBy: sequence).count - 1
    }

    /// After the terminal was given back for a stop: continues the program if it stopped (the
    /// kernel discards the stop in an orphaned process group, a test's may be one), then waits
    /// for it to take the terminal again.
    private func continueAndWaitForTheTerminal(_ terminal: InteractiveTerminal, enteredBefore entered: Int,
                                               sourceLocation: SourceLocation = #_sourceLocation) async throws {
        if try await terminal.waitUntilStopped() {
            terminal.expectRestored(sourceLocation: sourceLocation)
            kill(terminal.pid, SIGCONT)
        }
        await terminal.waitFor("the terminal taken again", sourceLocation: sourceLocation) { _ in
            count("\u{1B}[?1049h", in: terminal) > entered && terminal.screen.onAlternateScreen
        }
        let modes = terminal.modes
        #expect(modes.c_lflag & tcflag_t(ICANON | ECHO) == 0, "raw mode again", sourceLocation: sourceLocation)
    }

    /// D1: `kill -TSTP` (job control, a parent) stopped the app with the terminal raw, on the
    /// alternate screen, reporting the mouse; after `fg` it neither redrew nor read keys until
    /// Enter. It gives the terminal back before the stop and takes it again on continue, the
    /// half-typed command line kept.
    @Test func aStopFromOutsideGivesTheTerminalBackAndTakesItAgain() async throws {
        let (terminal, _) = try await InteractiveTerminal.app(Self.source, file: "attack.lua", showing: "pressed: none")
        terminal.type(":add x")
        await terminal.waitFor("the typed line") { lines in lines.last?.hasPrefix(":add x") == true }
        let left = count("\u{1B}[?1049l", in: terminal), entered = count("\u{1B}[?1049h", in: terminal)
        kill(terminal.pid, SIGTSTP)
        await terminal.waitFor("the terminal given back") { _ in count("\u{1B}[?1049l", in: terminal) > left }
        try await continueAndWaitForTheTerminal(terminal, enteredBefore: entered)
        await terminal.waitFor("the typed line after the stop") { _ in terminal.screen.lines.last?.hasPrefix(":add x") == true }
        terminal.type("y\r")
        await terminal.waitFor(line: "added: xy")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }

    /// D3: ctrl-z over the `?` help only closed the help; a second ctrl-z was needed. It
    /// suspends, and the help is there again after `fg`.
    @Test func ctrlZOverTheHelpSuspends() async throws {
        let (terminal, _) = try await InteractiveTerminal.app(Self.source, file: "attack.lua", showing: "pressed: none")
        terminal.type("?")
        await terminal.waitFor(line: "keys of Attack")
        let left = count("\u{1B}[?1049l", in: terminal), entered = count("\u{1B}[?1049h", in: terminal)
        terminal.type("\u{1A}")
        await terminal.waitFor("the terminal given back") { _ in count("\u{1B}[?1049l", in: terminal) > left }
        try await continueAndWaitForTheTerminal(terminal, enteredBefore: entered)
        await terminal.waitFor("the help again") { _ in terminal.screen.lines.contains { $0.contains("keys of Attack") } }
        terminal.type("x")   // closes the help (j would scroll this one, taller than the screen)
        await terminal.waitFor("the help closed") { _ in !terminal.screen.lines.contains { $0.contains("keys of Attack") } }
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }

    /// Starts the app listening as `name`; returns a client of it.
    private func startListening(_ name: String) async throws -> (InteractiveTerminal, Sandbox, RemoteTestClient) {
        let (terminal, sandbox, socket) = try await InteractiveTerminal.app(Self.source, file: "attack.lua", listening: name,
                                                                            showing: "pressed: none")
        return (terminal, sandbox, try RemoteTestClient(path: socket))
    }

    /// What a remote `key` request answered: "ok", or its error's message.
    private func press(_ keys: [String], from client: RemoteTestClient) async -> String {
        await Task.detached { () -> String in
            let answer = client.call("key", ["keys": keys], within: 15)
            if answer?["result"] != nil { return "ok" }
            return (answer?["error"] as? [String: Any])?["message"] as? String ?? "no answer: \(String(describing: answer))"
        }.value
    }

    /// D2: a remote `q` was typed into the person's half-typed command line (`:add halfq`) and
    /// the client told it had been pressed. It quits, as the README says, and the client hears
    /// so.
    @Test func aRemoteQQuitsWhileTheCommandLineIsHalfTyped() async throws {
        let (terminal, sandbox, client) = try await startListening("rq2")
        defer { withExtendedLifetime(sandbox) {} }   // its folder holds the socket
        terminal.type(":add half")
        await terminal.waitFor("the typed line") { lines in lines.last?.hasPrefix(":add half") == true }
        #expect(await press(["q"], from: client) == "ok")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
        #expect(!terminal.text.contains("halfq"), "\(terminal.screen.transcript)")
    }

    /// D2: a remote key is a key between the person's, never text in their open line: `j` runs
    /// its binding and leaves the line as typed; a line a remote key opened (`a`) takes that
    /// request's next keys, as the person's next keys would.
    @Test func aRemoteKeyLeavesThePersonsLineAndTypesIntoItsOwn() async throws {
        let (terminal, sandbox, client) = try await startListening("rj2")
        defer { withExtendedLifetime(sandbox) {} }
        terminal.type(":add half")
        await terminal.waitFor("the typed line") { lines in lines.last?.hasPrefix(":add half") == true }
        #expect(await press(["j"], from: client) == "ok")
        await terminal.waitFor(line: "pressed: j")
        #expect(terminal.screen.lines.last?.hasPrefix(":add half") == true, "the person's line as typed: \(terminal.screen.lines)")
        terminal.type("\r")
        await terminal.waitFor(line: "added: half")
        #expect(await press(["a", "x", "enter"], from: client) == "ok")
        await terminal.waitFor(line: "added: x")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }

    /// D4: on the terminal, a key's handler that ran past `--memory-limit` was reported as
    /// `error in task: [crescent controllers]:…` and its busy line kept counting. The error
    /// names the handler and the script's line, as the same command from piped stdin does, and
    /// the app runs on.
    @Test func aMemoryErrorInAKeysHandlerNamesTheHandlerAndLine() async throws {
        let (terminal, _) = try await InteractiveTerminal.app(Self.source, file: "attack.lua", options: ["--memory-limit", "60"],
                                                              showing: "pressed: none")
        terminal.type("m")
        await terminal.waitFor("the error on the status line", within: 60) { _ in
            terminal.screen.lines.last?.contains("error in Attack:bomb") == true
        }
        try await Task.sleep(for: .milliseconds(1500))
        #expect(terminal.screen.lines.last?.contains("running") != true, "no busy line left: \(terminal.screen.lines)")
        terminal.type("j")
        await terminal.waitFor(line: "pressed: j")
        terminal.type(":hog\r")
        await terminal.waitFor("the command's error", within: 60) { _ in
            terminal.screen.lines.last?.contains("error in Attack:hog") == true
        }
        terminal.type("q")
        #expect(await terminal.finish() == 1, "a handler failed")
        terminal.expectRestored()
        let after = terminal.writtenAfterRestore
        #expect(!after.contains(#/\[crescent controllers\w*\]:/#), "\(after)")
        #expect(!after.contains("error in task"), "\(after)")
        #expect(after.contains("error in Attack:bomb: ") && after.contains("attack.lua:15: not enough memory"), "\(after)")
        #expect(after.contains("error in Attack:hog: "), "\(after)")
    }

    /// D5 and D6: an error raised in `viewDidLoad` went to the main screen whole (1 MB there),
    /// and a line printed there never reached the status line. Both are the app's output: held,
    /// the last shown on the status line at the first frame, and written out after the run, a
    /// long line cut with the note a handler's gets.
    @Test func whatTheFirstControllerPrintsAsItLoadsIsHeldForTheStatusLine() async throws {
        let source = """
            local C = controller("Early")
            function C:loadView() return view.text { text = "early view" } end
            function C:viewDidLoad()
              self:key("z", "z", "z")
              if arg[1] == "long" then error(string.rep("M", 1000000)) end
              print("printed in viewDidLoad")
            end
            function C:z() end
            app.push(C)
            """
        for variant in ["print", "long"] {
            let sandbox = try Sandbox()
            let path = try sandbox.write("early.lua", source)
            let terminal = try InteractiveTerminal(["--data-dir", sandbox.path + "/data", "--no-plugins", path, variant],
                                                   directory: sandbox.path, environment: ["CRESCENT_HISTORY": sandbox.path + "/history"],
                                                   columns: 100, rows: 12)
            await terminal.waitFor(line: "early view")
            let shown = variant == "print" ? "printed in viewDidLoad" : "error in Early:viewDidLoad"
            await terminal.waitFor("the status line") { _ in terminal.screen.lines.last?.contains(shown) == true }
            let before = terminal.text.components(separatedBy: "\u{1B}[?1049h").first ?? ""
            #expect(!before.contains("printed in viewDidLoad") && !before.contains("MMMM"), "nothing on the main screen: \(before.suffix(300))")
            terminal.type("q")
            #expect(await terminal.finish() == (variant == "print" ? 0 : 1))
            terminal.expectRestored()
            let after = terminal.writtenAfterRestore
            if variant == "print" {
                #expect(after.contains("printed in viewDidLoad"), "\(after)")
            } else {
                #expect(after.contains("error in Early:viewDidLoad: ") && after.contains("more bytes of this line were dropped"), "\(after.suffix(500))")
                #expect(terminal.bytes.count < 100_000, "the 1 MB message was cut: \(terminal.bytes.count) bytes written")
            }
        }
    }
}
