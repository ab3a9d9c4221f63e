import ChildTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The fourth terminal attack's (new29t) findings, on a real pseudo-terminal: a second ctrl-c on
/// a handler blocked in a C call left the terminal raw (D1); what the run printed was written
/// out raw after the restore and drove the terminal (D2); a suspended job never ended on SIGTERM
/// (D3); a busy note was drawn after the restore (D4); `kill -INT` during `os.execute` was lost
/// (D5); a long key help showed as the method's name (D6); a remote `q` was said to call app.exit (D7).
@Suite struct KeyboardTerminalFourthAttackTests {
    /// `s` runs a program that sleeps (a handler blocked in a C call, where no interrupt reaches);
    /// `p`, `e` and `w` print, raise and write to stderr text holding escape sequences.
    static let source = #"""
        local C = controller("Attack")
        function C:loadView() return view.stack { view.text { id = "title", text = "ready" } } end
        function C:viewDidLoad()
          self:key("s", "sleepy", "sleep")
          self:key("p", "printed", "print")
          self:key("e", "raised", "raise")
          self:key("w", "written", "stderr")
        end
        function C:sleepy()
          io.open("started", "w"):close()
          os.execute("sleep 20")
        end
        function C:printed()
          print("item x\27[?1049h\27[?25l\27[?1000h end")
          print("\27[31mred\27[0m plain")
          self.view.title.text = "printed"
        end
        function C:raised() error("bad \27[?1049h\27[?25l\27[?1000h thing") end
        function C:written()
          io.stderr:write("warn \27[?1049h\27[?1000h\n")
          self.view.title.text = "written"
        end
        app.push(C)
        """#

    /// The sequences that leave the terminal broken when they come after the restore.
    static let hazards = ["\u{1B}[?1049h", "\u{1B}[?25l", "\u{1B}[?1000h"]

    /// Starts the app and presses `s`; returns once its program runs (plus the half second after
    /// which a ctrl-c stops a handler).
    private func startSleeping() async throws -> (InteractiveTerminal, Sandbox) {
        let (terminal, sandbox) = try await InteractiveTerminal.app(Self.source, file: "attack.lua", showing: "ready")
        terminal.type("s")
        await terminal.waitUntilStarted(sandbox)
        try await Task.sleep(for: .milliseconds(700))
        return (terminal, sandbox)
    }

    /// D1: the second ctrl-c's forced exit raced the teardown that the kill of the program let
    /// run: the leave bytes came, the mode did not (2 runs of 8 left the terminal raw). Each of
    /// these runs ends 130 with the mode back; the gap between the two ctrl-c varies.
    @Test func aSecondCtrlCOnAHandlerInACCallGivesTheModeBackEveryTime() async throws {
        for run in 0..<10 {
            let (terminal, sandbox) = try await startSleeping()
            terminal.type("\u{3}")
            try await Task.sleep(for: .milliseconds(run % 3 * 120))
            terminal.type("\u{3}")
            #expect(await terminal.finish() == 130, "run \(run)")
            terminal.expectRestored()
            withExtendedLifetime(sandbox) {}
        }
    }

    /// D2: what a handler printed, raised and wrote to stderr is written out after the restore
    /// with its escape sequences as escapes (the shell stays on the main screen, the cursor shown,
    /// the mouse not reported); colour sequences are kept, and reset after.
    @Test func heldOutputWrittenToTheTerminalCannotDriveIt() async throws {
        let (terminal, _) = try await InteractiveTerminal.app(Self.source, file: "attack.lua", showing: "ready")
        terminal.type("p")
        await terminal.waitFor(line: "printed")
        terminal.type("w")
        await terminal.waitFor(line: "written")
        terminal.type("e")
        await terminal.waitFor(line: "bad ")
        terminal.type("q")
        #expect(await terminal.finish() == 1, "the handler's error fails the run")
        terminal.expectRestored()
        let after = terminal.writtenAfterRestore
        for hazard in Self.hazards {
            #expect(!after.contains(hazard), "\(TerminalRun.escaped(hazard)) after the restore: \(TerminalRun.escaped(after))")
        }
        #expect(after.contains(#"item x\u{1B}[?1049h\u{1B}[?25l\u{1B}[?1000h end"#), "\(TerminalRun.escaped(after))")
        #expect(after.contains(#"bad \u{1B}[?1049h"#), "\(TerminalRun.escaped(after))")
        #expect(after.contains(#"warn \u{1B}[?1049h\u{1B}[?1000h"#), "\(TerminalRun.escaped(after))")
        #expect(after.contains("\u{1B}[31mred\u{1B}[0m plain"), "colours are kept: \(TerminalRun.escaped(after))")
        #expect(after.hasSuffix("\u{1B}[0m"), "and reset after: \(TerminalRun.escaped(after))")
    }

    /// D2: stderr redirected to a file gets what was written byte for byte.
    @Test func heldOutputToAFileStaysByteForByte() async throws {
        let sandbox = try Sandbox()
        let path = try sandbox.write("attack.lua", Self.source)
        let terminal = try InteractiveTerminal(["--data-dir", sandbox.path + "/data", "--no-plugins", path], directory: sandbox.path,
                                               environment: ["CRESCENT_HISTORY": sandbox.path + "/history"],
                                               columns: 100, rows: 12, stderr: .file(sandbox.path + "/errors"))
        await terminal.waitFor(line: "ready")
        terminal.type("w")
        await terminal.waitFor(line: "written")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
        let errors = (try? String(contentsOfFile: sandbox.path + "/errors", encoding: .utf8)) ?? ""
        #expect(errors.contains("warn \u{1B}[?1049h\u{1B}[?1000h\n"), "\(TerminalRun.escaped(errors))")
    }

    /// D3: an app suspended with ctrl-z (or then continued with `bg`) that gets SIGTERM, SIGHUP
    /// or SIGINT from outside set the terminal's mode from the background, was stopped by
    /// SIGTTOU and never ended. It ends at once with the signal's status, touching nothing of a
    /// terminal it gave back at the ctrl-z.
    @Test(arguments: [("TERM", "stopped", 143), ("HUP", "bg", 129), ("INT", "stopped", 130), ("TERM", "bg", 143)])
    func aSuspendedAppEndsOnASignalFromOutside(signal: String, state: String, status: Int) async throws {
        guard JobControlShell.isAvailable else { return }
        let sandbox = try Sandbox()
        _ = try sandbox.write("job.lua", """
            local C = controller("Job")
            function C:loadView() return view.text { text = "ready" } end
            app.push(C)
            """)
        let shell = try JobControlShell(directory: sandbox.path, environment: ["CRESCENT_HISTORY": sandbox.path + "/history"])
        await shell.waitFor("$ ")
        shell.type("'\(CrescentProcess.binaryPath)' --no-plugins --data-dir data job.lua\r")
        await shell.waitFor("ready")
        var mark = shell.count
        shell.type("\u{1A}")
        await shell.waitFor("Stopped", after: mark)
        if state == "bg" {
            mark = shell.count
            shell.type("bg\r")
            await shell.waitFor("job.lua &", after: mark)
        }
        mark = shell.count
        shell.type("kill -\(signal) %1; sleep 3; jobs -l; echo DONE-$((40+2))\r")
        await shell.waitFor("DONE-42", after: mark)
        let after = String(decoding: Array(shell.text.utf8).dropFirst(mark), as: UTF8.self)
        #expect(after.contains("Exit \(status)"), "\(TerminalRun.escaped(after))")
        #expect(!after.contains("Stopped"), "\(TerminalRun.escaped(after))")
        #expect(!after.contains("did not stop within"), "\(TerminalRun.escaped(after))")
        await shell.end()
    }

    /// D4: SIGTERM or SIGHUP while a key's handler is in a C call: the status line's "running N s"
    /// was drawn on the main screen after the terminal was given back. Nothing is.
    @Test(arguments: [(SIGTERM, Int32(143)), (SIGHUP, Int32(129))])
    func nothingIsDrawnAfterTheRestore(signal: Int32, status: Int32) async throws {
        for run in 0..<2 {
            let (terminal, sandbox) = try await startSleeping()
            await terminal.waitFor(line: "running")
            terminal.send(signal: signal)
            #expect(await terminal.finish() == status, "run \(run)")
            terminal.expectRestored()
            let after = terminal.writtenAfterRestore
            #expect(!after.contains("running") && !after.contains("\u{1B}[?2026h"), "run \(run): \(TerminalRun.escaped(after))")
            withExtendedLifetime(sandbox) {}
        }
    }

    /// D5: `kill -INT` while a key's handler waits in `os.execute` was lost (the host ignores
    /// SIGINT for the program, as system() does): the run went on. It ends 130 long before the
    /// program's 20 s are up.
    @Test func sigintDuringOsExecuteEndsTheRun() async throws {
        let (terminal, sandbox) = try await startSleeping()
        terminal.send(signal: SIGINT)
        #expect(await terminal.finish(timeLimit: 8) == 130)
        terminal.expectRestored()
        withExtendedLifetime(sandbox) {}
    }

    /// D6: a key's help longer than 16 characters showed as its method's name. It shows as given,
    /// and a line without room for every hint is shortened at a whole hint to `… ?`.
    @Test func aLongKeyHelpIsShownNotTheMethodName() async throws {
        let source = """
            local C = controller("Hints")
            function C:loadView() return view.text { text = "ready" } end
            function C:viewDidLoad()
              self:key("a", "doA", "add an item to the list")
              self:key("b", "doB", "\(String(repeating: "x", count: 17))")
            end
            app.push(C)
            """
        let (terminal, _) = try await InteractiveTerminal.app(source, file: "hints.lua", showing: "ready")
        let status = terminal.screen.lines.last ?? ""
        #expect(status.contains("a add an item to the list") && status.contains("b " + String(repeating: "x", count: 17)), "\(status)")
        #expect(!status.contains("doA") && !status.contains("doB"), "\(status)")
        terminal.type("q")
        #expect(await terminal.finish() == 0)

        let crowded = """
            local C = controller("Hints")
            function C:loadView() return view.text { text = "ready" } end
            function C:viewDidLoad()
              for _, key in ipairs({ "a", "b", "c", "d" }) do self:key(key, "do" .. key, "a help of thirty characters " .. key) end
            end
            app.push(C)
            """
        let (narrow, _) = try await InteractiveTerminal.app(crowded, file: "crowded.lua", showing: "ready")
        let line = narrow.screen.lines.last ?? ""
        #expect(line.contains("a a help of thirty characters a") && line.hasSuffix("… ?"), "\(line)")
        #expect(!line.contains("doa") && !line.contains("dob"), "\(line)")
        narrow.type("q")
        #expect(await narrow.finish() == 0)
    }

    /// D7: a remote client's `q` was reported as "called app.exit(0)"; it names the key.
    @Test func aRemoteQIsReportedAsTheKey() async throws {
        let (terminal, sandbox, socket) = try await InteractiveTerminal.app(Self.source, file: "attack.lua", listening: "rq", showing: "ready")
        defer { withExtendedLifetime(sandbox) {} }
        let client = try RemoteTestClient(path: socket)
        await Task.detached { _ = client.call("key", ["keys": ["q"]], within: 5) }.value
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
        let after = terminal.writtenAfterRestore
        #expect(after.range(of: #"remote client \d+ pressed q: the host quits"#, options: .regularExpression) != nil,
                "\(TerminalRun.escaped(after))")
        #expect(!after.contains("called app.exit"), "\(TerminalRun.escaped(after))")
    }
}
