import Foundation
import Testing

/// `--ui plain` wrote a view's text raw: right to a pipe or a file (the data kept byte for byte),
/// wrong on a terminal, where a feed title's `ESC ]0;…` retitled the person's window and an
/// `ESC [2J` cleared it (issue 34). On a terminal the control characters are written as escapes,
/// as the live view writes them; to a pipe, byte for byte. `crescent view` prints a running
/// host's view by the same rule.
@Suite struct PlainTerminalEscapeTests {
    /// A view whose text holds a clear-screen and a window-title sequence.
    static let app = #"""
        local C = controller("Feed")
        function C:loadView() return view.text { id = "title", text = "title: \27[2J|\27]0;x\7|end" } end
        app.push(C)
        """#

    /// The view's line as `live` shows it: each control character as its escape.
    static let escaped = #"title: \u{1B}[2J|\u{1B}]0;x\u{7}|end"#
    static let raw = "title: \u{1B}[2J|\u{1B}]0;x\u{7}|end"

    @Test func onATerminalControlCharactersAreEscaped() async throws {
        let (terminal, _) = try await InteractiveTerminal.app(Self.app, file: "app.lua", options: ["--ui", "plain"], showing: "|end")
        terminal.type("quit\r")
        #expect(await terminal.finish() == 0)
        let text = terminal.text
        #expect(text.contains(Self.escaped), "\(text.debugDescription)")
        #expect(!text.contains("\u{1B}[2J") && !text.contains("\u{1B}]0;"), "\(text.debugDescription)")
    }

    @Test func toAPipeTheTextIsKeptByteForByte() async throws {
        let result = try await runScript(Self.app, stdinText: "", options: ["--ui", "plain"])
        #expect(result.status == 0 && result.stdout == Self.raw + "\n\n", "\(result)")
    }

    /// `crescent view` of a host's view: escaped on a terminal, raw to a pipe.
    @Test func crescentViewEscapesOnATerminalOnly() async throws {
        let (host, sandbox, _) = try await InteractiveTerminal.app(Self.app, file: "app.lua", listening: "esc", showing: "|end")
        let runtime: [String: String?] = ["XDG_RUNTIME_DIR": sandbox.path + "/run"]
        let viewer = try InteractiveTerminal(["view", "esc"], directory: sandbox.path, environment: runtime)
        #expect(await viewer.finish() == 0)
        #expect(viewer.text.contains(Self.escaped) && !viewer.text.contains("\u{1B}[2J"), "\(viewer.text.debugDescription)")
        let piped = try await crescent(["view", "esc"], in: sandbox, environment: runtime)
        #expect(piped.status == 0 && piped.stdout == Self.raw + "\n", "\(piped)")
        // A controller with no keys keeps the command line open.
        host.type("quit\r")
        #expect(await host.finish() == 0)
    }
}
