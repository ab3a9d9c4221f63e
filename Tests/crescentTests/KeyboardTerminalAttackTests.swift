import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the attack on the terminal (new25k) found after its first two fixes, each on a real
/// pseudo-terminal: a remote client's key whose handler loops, the client hanging up (D3); a
/// remote `ctrl-z` (D19); a `complete` function that loops (D6); a looping handler never named on
/// the status line (D4); `ctrl-z` on the open command line (D5).
@Suite struct KeyboardTerminalAttackTests {
    /// `L` loops, `j` changes the view, `a` opens the command line; a command `spin` completes
    /// with a function that loops.
    static let source = """
        local C = controller("Attack")
        function C:loadView() return view.stack { view.text { id = "title", text = "pressed: none" } } end
        function C:viewDidLoad()
          self:key("L", "loop", "loop")
          self:key("j", "pressJ", "say j")
          self:command("add", "add", "add ITEM", { args = { "item: string" } })
          self:command("spin", "add", "spin", { args = { "x: string" }, complete = function() C.loop() end })
        end
        function C:loop()
          io.open("started", "w"):close()
          while true do end
        end
        function C:pressJ() self.view.title.text = "pressed: j" end
        function C:add(item) self.view.title.text = "added: " .. item end
        app.push(C)
        """

    /// Starts `source` listening as `name` with its runtime folder in the sandbox.
    private func start(listening name: String) async throws -> (InteractiveTerminal, Sandbox, String) {
        try await InteractiveTerminal.app(Self.source, file: "attack.lua", listening: name, showing: "pressed: none")
    }

    /// A client of the host listening as `name` presses `L` (a loop) and hangs up `wait` after
    /// the loop started; returns once the status line says the stop.
    private func pressLoopRemotelyAndHangUp(listening name: String, after wait: Duration) async throws -> InteractiveTerminal {
        let (terminal, sandbox, socket) = try await start(listening: name)
        do {
            let client = try RemoteTestClient(path: socket)
            client.request("key", ["keys": ["L"]])
            await terminal.waitUntilStarted(sandbox)
            try await Task.sleep(for: wait)
        }   // the client hangs up
        await terminal.waitFor("the stop on the status line") { lines in lines.last?.contains("remote client") == true && lines.last?.contains("stopped key 'L'") == true }
        return terminal
    }

    /// D3: a remote client presses a key whose handler loops and hangs up. The hang-up stops the
    /// handler as a Ctrl-C would: no "error in task: interrupted", no busy line left behind, and
    /// the app exits 0 on `q` (it showed the error, the next Ctrl-C quit with 130 or `q` exited 1).
    @Test func aRemoteClientThatHangsUpOnALoopingKeyStopsIt() async throws {
        let terminal = try await pressLoopRemotelyAndHangUp(listening: "rk", after: .milliseconds(700))
        terminal.type("j")
        await terminal.waitFor(line: "pressed: j")
        try await Task.sleep(for: .milliseconds(1200))
        #expect(terminal.screen.lines.last?.contains("running") != true, "no busy line left: \(terminal.screen.lines)")
        terminal.type("\u{3}")
        #expect(await terminal.finish() == 130)
        terminal.expectRestored()
        #expect(!terminal.text.contains("error in task"), "\(terminal.screen.transcript)")
    }

    @Test func qAfterARemoteStopExitsZero() async throws {
        let terminal = try await pressLoopRemotelyAndHangUp(listening: "rq", after: .milliseconds(300))
        terminal.type("q")
        #expect(await terminal.finish() == 0, "a stop is no failure")
        terminal.expectRestored()
        #expect(!terminal.text.contains("error in task"), "\(terminal.screen.transcript)")
    }

    /// D19: `crescent send --key ctrl-z` stopped the person's app and never returned (the host,
    /// stopped, could not answer). A remote ctrl-z is refused with an error that says why, and
    /// the app is not stopped.
    @Test func aRemoteCtrlZIsRefusedAndTheAppRunsOn() async throws {
        let (terminal, sandbox, socket) = try await start(listening: "kz")
        defer { withExtendedLifetime(sandbox) {} }   // its folder holds the socket
        let client = try RemoteTestClient(path: socket)
        let message = await Task.detached { () -> String in
            let answer = client.call("key", ["keys": ["j", "ctrl-z"]], within: 5)
            return (answer?["error"] as? [String: Any])?["message"] as? String ?? "no error: \(String(describing: answer))"
        }.value
        #expect(message.contains("ctrl-z is not pressed from a remote client"), "\(message)")
        #expect(!terminal.isStopped, "the host is not stopped")
        terminal.type("j")
        await terminal.waitFor(line: "pressed: j")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }

    /// D6: a `complete` function that loops froze the app, and the one Ctrl-C quit it (130). It
    /// is stopped as a looping handler is, and the app runs on.
    @Test func ctrlCStopsACompletionThatLoops() async throws {
        let (terminal, sandbox) = try await InteractiveTerminal.app(Self.source, file: "attack.lua", showing: "pressed: none")
        terminal.type(":spin \t")
        await terminal.waitUntilStarted(sandbox)
        try await Task.sleep(for: .milliseconds(700))
        terminal.type("\u{3}")
        await terminal.waitFor(line: "ctrl-c stopped Tab completion of 'spin' after")
        #expect(!terminal.screen.transcript.contains { $0.contains("complete failed") }, "\(terminal.screen.lines)")
        terminal.type("x\r")
        await terminal.waitFor(line: "added: x")
        terminal.type("q")
        #expect(await terminal.finish() == 0, "a stop is no failure")
        terminal.expectRestored()
    }

    /// D5: ctrl-z did nothing while the command line was open, so a controller without keys
    /// (whose line is always open) never suspended. It suspends with the line open; the typed
    /// text is there after `fg`.
    @Test func ctrlZSuspendsWithTheCommandLineOpen() async throws {
        let (terminal, _) = try await InteractiveTerminal.app(Self.source, file: "attack.lua", showing: "pressed: none")
        terminal.type(":add x")
        await terminal.waitFor("the typed line") { lines in lines.last?.hasPrefix(":add x") == true }
        let entered = terminal.text.components(separatedBy: "\u{1B}[?1049h").count
        terminal.type("\u{1A}")
        if try await terminal.waitUntilStopped() { kill(terminal.pid, SIGCONT) }
        await terminal.waitFor("the terminal given back and taken again") { _ in
            terminal.text.components(separatedBy: "\u{1B}[?1049h").count > entered && terminal.screen.onAlternateScreen
        }
        await terminal.waitFor("the typed line after fg") { lines in lines.last?.hasPrefix(":add x") == true }
        terminal.type("\r")
        await terminal.waitFor(line: "added: x")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }

    /// D7: after a crash signal the terminal was given back, but the Swift runtime's backtracer
    /// then asked "Press space to interact…" and held the person's shell for minutes. The report
    /// is printed without the prompt and the process dies of its signal.
    @Test func aCrashReportsWithoutHoldingTheTerminal() async throws {
        let (terminal, _) = try await InteractiveTerminal.app(Self.source, file: "attack.lua", showing: "pressed: none",
                                                              environment: ["SWIFT_BACKTRACE": nil])
        kill(terminal.pid, SIGSEGV)
        // Symbolication in a debug build under load takes its time; the prompt waited far longer.
        _ = await terminal.finish(timeLimit: 120, expectedSignals: [SIGSEGV])
        terminal.expectRestored()
        #expect(!terminal.text.contains("Press space to interact"), "\(terminal.text.suffix(2000))")
    }

    /// D4: a handler that loops holds the loop, so the status line never named it (only one that
    /// waits was). It is named while it loops, its count goes up, and Ctrl-C stops it.
    @Test func aHandlerThatLoopsIsNamedOnTheStatusLine() async throws {
        let (terminal, sandbox) = try await InteractiveTerminal.app(Self.source, file: "attack.lua", showing: "pressed: none")
        defer { withExtendedLifetime(sandbox) {} }   // the handler writes a file in it
        terminal.type("L")
        await terminal.waitFor("the loop named") { lines in lines.last?.hasPrefix("key 'L' running") == true }
        let first = terminal.screen.lines.last ?? ""
        await terminal.waitFor("the count going up") { lines in
            lines.last?.hasPrefix("key 'L' running") == true && lines.last != first
        }
        #expect(terminal.screen.lines.last?.contains("ctrl-c stops it") == true, "\(terminal.screen.lines)")
        terminal.type("\u{3}")
        await terminal.waitFor(line: "ctrl-c stopped key 'L' after")
        terminal.type("j")
        await terminal.waitFor(line: "pressed: j")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }
}
