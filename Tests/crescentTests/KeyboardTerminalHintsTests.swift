import Foundation
import Testing

/// Issue 34: a controller with many keys on an 80-column terminal. Its key hints are wider than
/// the line; a handler's error or `print` must still be read there (the hints hid it: only the
/// busy handler's stop message took their place).
@Suite struct KeyboardTerminalHintsTests {
    /// Twelve keys: the hints alone take about a hundred columns. `e` fails, `p` prints.
    static let source = """
        local C = controller("Groceries")
        function C:loadView() return view.stack { view.text { id = "title", text = "groceries" } } end
        function C:viewDidLoad()
          for _, key in ipairs { "a", "d", "r", "s", "f", "m", "u", "x", "i", "n" } do
            self:key(key, "noop", "does " .. key)
          end
          self:key("e", "edit", "edit item")
          self:key("p", "save", "save list")
        end
        function C:noop() end
        function C:edit() error("no item selected: press j to select one") end
        function C:save() print("saved 3 items") end
        app.push(C)
        """

    /// Runs ``source`` on an 80 x 24 terminal and waits for its view.
    private func start() async throws -> InteractiveTerminal {
        let sandbox = try Sandbox()
        _ = try sandbox.write("groceries.lua", Self.source)
        let terminal = try InteractiveTerminal(["--data-dir", sandbox.path + "/data", "--no-plugins", "groceries.lua"], directory: sandbox.path,
                                               environment: ["CRESCENT_HISTORY": sandbox.path + "/history"], columns: 80, rows: 24)
        await terminal.waitFor(line: "groceries")
        return terminal
    }

    /// A handler's error and a `print` show on the status line of an 80-column terminal beside
    /// hints shortened at a whole hint to `… ?` (an error too long for the rest ends in `… (?)`
    /// and `?` shows it whole); `?` still lists every key.
    @Test func aMessageIsReadBesideHintsWiderThanTheLine() async throws {
        let terminal = try await start()
        await terminal.waitFor("the hints shortened") { $0.last?.hasSuffix("… ?") == true }
        let hints = terminal.screen.lines.last ?? ""
        #expect(hints.hasPrefix("a does a  d does d"), "the hints stay first: \(hints)")
        terminal.type("e")
        await terminal.waitFor("the error on the status line") { $0.last?.contains("│ crescent: error in Groceries:edit: groceries.lua") == true }
        let line = terminal.screen.lines.last ?? ""
        #expect(line.hasPrefix("a does a  d does d  … ?  │ "), "the hints stay first, cut to a third of the line: \(line)")
        #expect(line.hasSuffix("… (?)"), "too long for the rest of the line: ? shows it whole: \(line)")
        terminal.type("?")
        await terminal.waitFor(line: "Last message:")
        #expect(terminal.screen.lines.joined(separator: " ").contains("no item selected: press j to select one"), "\(terminal.screen.lines)")
        terminal.type("q")
        terminal.type("p")
        await terminal.waitFor("the print on the status line") { $0.last?.contains("saved 3 items") == true }
        terminal.type("?")
        await terminal.waitFor(line: "save list")
        #expect(terminal.screen.lines.contains { $0.contains("does n") }, "the help lists every key: \(terminal.screen.lines)")
        terminal.type("q")
        terminal.type("q")
        _ = await terminal.finish()
        terminal.expectRestored()
    }
}
