import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The REPL's hold on the terminal (issue 34): a bracketed paste is text for the editor, and the
/// terminal is given back as found (modes, bracketed paste off) on every way out, as a controller
/// app's is (KeyboardTerminalTests).
@Suite struct ReplTerminalTests {
    /// A REPL in a fresh sandbox, its prompt up.
    private func open(_ sandbox: Sandbox, environment: [String: String?] = [:]) async throws -> InteractiveTerminal {
        let terminal = try InteractiveTerminal(["--data-dir", sandbox.path + "/data", "--no-plugins"], directory: sandbox.path,
                                               environment: environment.merging(["CRESCENT_HISTORY": sandbox.path + "/history"]) { given, _ in given })
        await terminal.waitFor("the first prompt") { $0.last == ">" }
        return terminal
    }

    /// Pasted lines are one chunk being edited: the pasted newline runs nothing; Enter runs it all.
    @Test func aPastedNewlineRunsNothingUntilEnter() async throws {
        let sandbox = try Sandbox()
        let repl = try await open(sandbox)
        #expect(repl.text.contains("\u{1B}[?2004h"), "bracketed paste is on while the prompt reads")
        repl.type("\u{1B}[200~x = 40\rprint('sum ' .. x + 2)\u{1B}[201~")
        await repl.waitFor(line: ".. print('sum ' .. x + 2)")
        try await Task.sleep(for: .milliseconds(200))
        #expect(!repl.screen.transcript.contains { $0.hasPrefix("sum") }, "the paste's newline ran nothing")
        repl.type("\r")
        await repl.waitFor(line: "sum 42")
        repl.type("\u{4}")
        #expect(await repl.finish() == 0)
        repl.expectRestored()
    }

    /// A paste whose end mark never comes (a connection cut in the middle of one) ends after a
    /// second without bytes, as a controller app's does: what came is on the line, and Ctrl-C
    /// and Ctrl-D are keys again (they were taken as pasted text, for ever).
    @Test func aPasteWithoutItsEndStopsTakingKeys() async throws {
        let sandbox = try Sandbox()
        let repl = try await open(sandbox)
        repl.type("\u{1B}[200~print(\"unterminated")
        await repl.waitFor(line: "> print(\"unterminated")
        repl.type("\u{3}")
        await repl.waitFor(line: "> print(\"unterminated^C")
        repl.type("\u{4}")
        #expect(await repl.finish() == 0)
        repl.expectRestored()
    }

    /// The ways a REPL ends while its prompt is up, and the status each gives.
    enum WayOut: String, CaseIterable, Sendable {
        case ctrlD, dotExit, appExit, sigterm, sighup, crash
    }

    @Test(arguments: WayOut.allCases)
    func everyWayOutGivesTheTerminalBack(_ way: WayOut) async throws {
        let sandbox = try Sandbox()
        // Without the Swift runtime's backtracer, which on a terminal waits for a person.
        let repl = try await open(sandbox, environment: ["SWIFT_BACKTRACE": "enable=no"])
        var expectedSignals: Set<Int32> = []
        let status: Int32
        switch way {
        case .ctrlD: repl.type("\u{4}"); status = 0
        case .dotExit: repl.type(".exit\r"); status = 0
        case .appExit: repl.type("app.exit(3)\r"); status = 3
        case .sigterm: kill(repl.pid, SIGTERM); status = 143
        case .sighup: kill(repl.pid, SIGHUP); status = 129
        case .crash: kill(repl.pid, SIGABRT); expectedSignals = [SIGABRT]; status = 128 + SIGABRT
        }
        let ended = await repl.finish(expectedSignals: expectedSignals)
        if way != .crash { #expect(ended == status, "\(way)") }
        repl.expectRestored()
    }
}
