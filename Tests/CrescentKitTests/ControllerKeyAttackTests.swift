@testable import CrescentKit
import Foundation
import LineEditing
import Testing

/// What the attack on the terminal (new25k) found in keys and commands that needs no terminal:
/// `app.commandLine` past the line's limit (D16), `j`/`k` with nowhere to go (D12), a command
/// named `exit` (D9), the selected row removed (D11).
@Suite struct ControllerKeyAttackTests {
    /// A controller whose key `e` opens the command line with `text` typed, and whose command
    /// `echo` prints its argument's length and the argument; `e` then Enter pressed.
    private func echoTyped(_ text: String) throws -> TestHost {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:viewDidLoad()
              self:key("e", "startEcho", "echo")
              self:command("echo", "echo", "echo TEXT", { args = { "text: string" } })
            end
            function C:startEcho() app.commandLine(\(text)) end
            function C:echo(text) print("echo", #text, text:sub(1, 10)) end
            app.push(C)
            """)
        test.settle()
        test.host.commandLine = .closed(History())
        test.host.terminalInput([.text("e")])
        test.settle()
        return test
    }

    /// D16: `app.commandLine` took a million characters (and control characters) that the line
    /// never holds when typed. It is cut at 4,096 with a message, on one line, without controls.
    @Test func appCommandLineKeepsTheLinesLimit() throws {
        let test = try echoTyped(#""echo " .. string.rep("h", 10000)"#)
        #expect(test.host.presenter.status.message.contains("holds 4096 characters"), "\(test.host.presenter.status.message)")
        test.host.terminalInput([.key(.enter)])
        test.settle()
        #expect(test.lines == ["echo\t4091\thhhhhhhhhh"])
    }

    @Test func appCommandLineDropsControlCharacters() throws {
        let test = try echoTyped(#""echo \27[2J\27]0;pwn\7x""#)
        test.host.terminalInput([.key(.enter)])
        test.settle()
        #expect(test.lines == ["echo\t10\t[2J]0;pwnx"])
    }

    /// D12: `j` on the last row, `k` on an empty list said "no key 'j'", though `j` and `k` are
    /// default keys. They do nothing, quietly.
    @Test func selectionKeysWithNowhereToGoAreNoUnknownKeys() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:loadView() return view.list { id = "items", selectable = true, items = { "a", "b" } } end
            function C:viewDidLoad() self:key("D", "clear", "clear") end
            function C:clear() self.view.items:update { items = {} } end
            app.push(C)
            """)
        test.settle()
        test.host.pressTerminalKeys(["j", "j", "j"])
        test.settle()
        #expect(test.host.presenter.status.message == "", "\(test.host.presenter.status.message)")
        test.host.pressTerminalKeys(["D", "k", "j", "enter"])
        test.settle()
        #expect(test.host.presenter.status.message == "", "\(test.host.presenter.status.message)")
        test.host.pressTerminalKeys(["z"])
        test.settle()
        #expect(test.host.presenter.status.message.hasPrefix("no key 'z'"), "an unbound letter is still said")
    }

    /// D9: a controller's own command `exit` was shadowed by quit's alias (`:exit` quit with 0).
    /// Its own runs; `quit` always quits, and a command named `quit` is refused where it is bound.
    @Test func aControllersOwnExitCommandRuns() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:viewDidLoad() self:command("exit", "leave", "exit 3") end
            function C:leave() app.exit(3) end
            app.push(C)
            app.send("exit")
            """)
        test.settle()
        #expect(test.exitStatus == 3)
    }

    @Test func aCommandNamedQuitIsRefused() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:viewDidLoad()
              local ok, err = pcall(self.command, self, "quit", "leave")
              print(ok, err)
            end
            function C:leave() end
            app.push(C)
            """)
        test.settle()
        #expect(test.lines.first?.hasPrefix("false") == true, "\(test.lines)")
        #expect(test.lines.first?.contains("'quit' always quits the app") == true, "\(test.lines)")
    }

    /// D11: removing the selected row moved the selection to the next item without telling
    /// `selectionChanged`. It is told, after the handler that removed the row.
    @Test func removingTheSelectedRowTellsSelectionChanged() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:loadView() return view.list { id = "items", selectable = true, items = { "a", "b", "c" } } end
            function C:viewDidLoad() self:key("D", "remove", "remove the selected row") end
            function C:remove() self.view.items:apply({ deleted = { self.view.items.selected } }) print("removed") end
            function C:selectionChanged(id, index, item) print("changed", id, index, item) end
            app.push(C)
            """)
        test.settle()
        var said: [String] { test.lines.filter { $0.hasPrefix("changed") || $0 == "removed" } }
        test.host.pressTerminalKeys(["j", "D"])
        test.settle()
        #expect(said == ["changed\titems\t2\tb", "removed", "changed\titems\t2\tc"])
        test.host.pressTerminalKeys(["D"])
        test.settle()
        test.host.pressTerminalKeys(["D"])   // the last row: none is left to select
        test.settle()
        #expect(said.suffix(3) == ["removed", "changed\titems\t1\ta", "removed"], "\(said)")
    }
}
