import Foundation
import Testing

/// What an independent attack on the terminal (new25k) found typed keys doing wrong: keys that
/// came in one read with a key that opens the command line ran as keys (groceries' `a d d Enter`
/// deleted the selected item instead of adding "dd"), and the strings a terminal sends in answer
/// to queries (OSC, DCS) were split into keys (`ESC P q e ESC \` quitted).
@Suite struct KeyboardTerminalTypeAheadTests {
    static let source = """
        local C = controller("Shop")
        function C:loadView() return view.stack { view.text { id = "title", text = "items: none" } } end
        function C:viewDidLoad()
          self:key("a", "startAdd", "add an item")
          self:key("d", "delete", "delete")
          self:key("e", "leave", "exit 3")
          self:command("add", "add", "add an item")
        end
        function C:startAdd() app.commandLine("add ") end
        function C:delete() print("deleted") end
        function C:leave() app.exit(3) end
        function C:add(name) self.view.title.text = "items: " .. name end
        app.push(C)
        """

    @Test func keysTypedWithTheKeyThatOpensTheCommandLineGoIntoIt() async throws {
        let (terminal, _) = try await InteractiveTerminal.app(Self.source, file: "shop.lua", showing: "items: none")
        terminal.type("add\r")   // one write: one read, as a fast typist, tmux or ssh gives it
        await terminal.waitFor(line: "items: dd")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
        #expect(!terminal.screen.transcript.contains("deleted"), "\(terminal.screen.transcript)")
    }

    @Test func aTerminalsAnswersAreNeverKeys() async throws {
        let (terminal, _) = try await InteractiveTerminal.app(Self.source, file: "shop.lua", showing: "items: none")
        // A title report, a DECRQSS answer holding `e` and `dd`, an OSC 11 colour answer, then a
        // real key.
        terminal.type("\u{1B}]0;title\u{07}\u{1B}P1$re dd\u{1B}\\\u{1B}]11;rgb:0000/0000/0000\u{1B}\\a")
        await terminal.waitFor("the command line opened by the real key") { lines in lines.last?.hasPrefix(":add") == true }
        terminal.type("x\r")
        await terminal.waitFor(line: "items: x")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
        #expect(!terminal.screen.transcript.contains("deleted"), "\(terminal.screen.transcript)")
    }
}
