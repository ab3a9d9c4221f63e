import Foundation
import Testing

/// The third terminal attack's (new28t) findings seen by a person, on a real pseudo-terminal:
/// escape sequences in data lost only their ESC and BEL bytes, so their parameters showed as if
/// they were the text (D6); Ctrl-D in the command line a controller without keys keeps open
/// closed it, and the command typed next ran as keys (D7).
@Suite struct KeyboardTerminalThirdAttackTests {
    /// D6: a title, a text, a list row, a table cell and a printed message holding control
    /// characters show them as escapes (`\u{1B}`), and the table's columns stay aligned.
    @Test func controlCharactersInDataShowAsEscapes() async throws {
        let source = #"""
            local C = controller("Evil")
            function C:init() self.title = "T\27]0;TITLEPWN\7\27[2Jx" end
            function C:loadView()
              return view.stack {
                view.text { text = "say \27[31mred\27[0m" },
                view.list { id = "feeds", selectable = true, items = { "Local \27[2JFeed", "plain" } },
                view.table { columns = { "name", "n" }, rows = { { name = "a\7b", n = 1 }, { name = "ab", n = 2 } } },
              }
            end
            function C:viewDidLoad() self:key("p", "p", "print") end
            function C:p() print("bell\7here") end
            app.push(C)
            """#
        let (terminal, _) = try await InteractiveTerminal.app(source, file: "evil.lua", showing: "say ")
        let lines = terminal.screen.lines
        #expect(lines.contains { $0.hasPrefix(#"T\u{1B}]0;TITLEPWN\u{7}\u{1B}[2Jx"#) }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix(#"say \u{1B}[31mred\u{1B}[0m"#) }, "\(lines)")
        #expect(lines.contains { $0.contains(#"Local \u{1B}[2JFeed"#) }, "\(lines)")
        let first = lines.first { $0.hasPrefix(#"a\u{7}b"#) } ?? ""
        let second = lines.first { $0.hasPrefix("ab ") } ?? ""
        #expect(!first.isEmpty && first.firstIndex(of: "1").map { first.distance(from: first.startIndex, to: $0) }
                == second.firstIndex(of: "2").map { second.distance(from: second.startIndex, to: $0) }, "\(lines)")
        terminal.type("p")
        await terminal.waitFor(line: #"bell\u{7}here"#)
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }

    /// D7: Ctrl-D on the empty command line of a controller without keys does nothing: the line
    /// stays open, and the command typed next runs as a command, not as keys.
    @Test func ctrlDOnTheEmptyCommandLineLeavesItOpen() async throws {
        let source = """
            local C = controller("H")
            function C:loadView() return view.text { id = "said", text = "said: nothing" } end
            function C:viewDidLoad() self:command("hi", "hi", "hi N", { args = { "n: integer" } }) end
            function C:hi(n) self.view.said.text = "said: hi " .. n end
            app.push(C)
            """
        let (terminal, _) = try await InteractiveTerminal.app(source, file: "nokeys.lua", showing: "said: nothing")
        await terminal.waitFor("the open command line") { lines in lines.last?.hasPrefix(":") == true }
        terminal.type("\u{4}")
        try await Task.sleep(for: .milliseconds(300))
        terminal.type("hi 3\r")
        await terminal.waitFor(line: "said: hi 3")
        #expect(!terminal.screen.lines.contains { $0.contains("no key") }, "\(terminal.screen.lines)")
        terminal.type("quit\r")
        #expect(await terminal.finish() == 0)
        terminal.expectRestored()
    }
}
