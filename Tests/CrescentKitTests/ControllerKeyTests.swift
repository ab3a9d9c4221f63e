@testable import CrescentKit
import Foundation
import LineEditing
import Testing

/// `self:key`, `app.press` and the default keys, in virtual time with no terminal.
@Suite struct ControllerKeyTests {
    /// A controller binding `a` and `x` (which raises), pushed; `extra` runs after.
    private func listApp(_ extra: String = "") throws -> TestHost {
        let test = try TestHost()
        test.run("""
            local List = controller("List")
            function List:viewDidLoad()
              self:key("a", "add", "add an item")
              self:key("x", "explode", "fail on purpose")
              self:key("f5", "reload")
            end
            function List:add(key) print("add", key) end
            function List:reload(key) print("reload", key) end
            function List:explode() error("boom") end
            app.push(List)
            \(extra)
            """)
        test.settle()
        return test
    }

    @Test func boundKeysCallTheirMethodsInOrder() throws {
        let test = try listApp(#"app.press("a", "f5") app.send("quit")"#)
        #expect(test.lines == ["add\ta", "reload\tf5"])
        #expect(test.exitStatus == 0)
    }

    @Test func terminalKeysThatNoBindingCanUseAreDropped() throws {
        let test = try listApp()
        test.host.pressTerminalKeys(["ctrl-up", "a", "shift-right"])
        test.settle()
        #expect(test.lines == ["add\ta"])
        #expect(test.stderr == "")
    }

    @Test func anUnknownKeyNameIsAnErrorNamingItAndTheNames() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:go() end
            local c = app.push(C)
            print(select(2, pcall(c.key, c, "ctrl-R", "go")))
            print(select(2, pcall(c.key, c, "ctrl-c", "go")))
            print(select(2, pcall(c.key, c, "a", "missing")))
            print(select(2, pcall(app.press, "downn")))
            """)
        test.settle()
        let lines = test.lines
        #expect(lines.count == 4)
        #expect(lines.first?.contains("bad argument #1 to 'key' (unknown key 'ctrl-R'; did you mean 'ctrl-r'?; key names are a character (a, A, 1, ?), ctrl-a…ctrl-z, alt-<character>, enter, esc, tab, shift-tab") == true)
        #expect(lines.first?.contains("pageup, pagedown, home, end, space, f1, f2") == true)
        #expect(lines.dropFirst().first?.contains("ctrl-c always quits, so it cannot be bound") == true)
        #expect(lines.dropFirst(2).first?.contains("key 'a': C has no method 'missing'") == true)
        #expect(lines.dropFirst(3).first?.contains("bad argument #1 to 'app.press' (unknown key 'downn'") == true)
    }

    /// A name that is no key is shown cut and escaped: a 100,000-byte name does not come back
    /// whole, a NUL is written `\0`, not raw to the terminal.
    @Test func anUnknownKeyNameIsShownCutAndEscaped() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:go() end
            local c = app.push(C)
            local _, huge = pcall(c.key, c, string.rep("x", 100000), "go")
            print(#huge < 1000, (huge:match("unknown key ('[^;]*);")))
            local _, nul = pcall(c.key, c, "a\\0b\\n", "go")
            print(nul:find("\\0", 1, true) == nil, (nul:match("unknown key ('[^;]*);")))
            local _, cutCharacter = pcall(app.press, "x" .. string.rep("é", 20))
            print((cutCharacter:match("unknown key ('[^;]*);")))
            """)
        test.settle()
        #expect(test.lines == ["true\t'\(String(repeating: "x", count: 32))…' (100000 bytes)", "true\t'a\\0b\\10'",
                               "'x\(String(repeating: "é", count: 15))…' (41 bytes)"], "\(test.lines)")
    }

    /// 100,000 keys pressed at once are handled in time linear in their number (each key once
    /// copied the rest of the arguments, and taking one from the queue moved all the others).
    @Test func aHundredThousandKeysAreHandledInLinearTime() throws {
        let test = try TestHost()
        let started = ContinuousClock.now
        test.run("""
            local C = controller("C")
            local count = 0
            function C:viewDidLoad() self:key("n", "count") end
            function C:count() count = count + 1 end
            app.push(C)
            local keys = {}
            for i = 1, 100000 do keys[i] = "n" end
            app.press(table.unpack(keys))
            timer.after(1, function() print(count) end)
            """)
        test.settle()
        test.advance(seconds: 2)
        let elapsed = ContinuousClock.now - started
        #expect(test.lines == ["100000"])
        #expect(elapsed < .seconds(30), "100,000 keys took \(elapsed)")
    }

    /// A long paste into the `:` command line: what fits in 4,096 characters is typed, the
    /// rest dropped with a message on the status line, and each read costs its own length (the
    /// line was copied and drawn again for every character: 20 KB froze the app).
    @Test func aLongPasteIntoTheCommandLineIsCutInLinearTime() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:viewDidLoad() self:command("add", "add", "add ITEM", { args = { "item: string" } }) end
            function C:add(item) print("added", #item) end
            app.push(C)
            """)
        test.settle()
        test.host.commandLine = .closed(History())
        let started = ContinuousClock.now
        test.host.terminalInput([.text("add ")])
        #expect(test.host.commandLine?.isOpen == true, "a controller without keys keeps the command line open")
        let read = String(repeating: "a", count: 4096)
        for _ in 0..<5 { test.host.terminalInput([.text(read)]) }   // 20 KB, as a terminal delivers it
        #expect(test.host.presenter.status.message == "the command line holds 4096 characters; the rest was dropped")
        let status = test.host.presenter.status
        #expect(status.text(width: 100).hasSuffix("   │ the command line holds 4096 characters; the rest was dropped"))
        let shown = status.shownPrompt(width: 100)
        #expect(shown?.text.hasPrefix("…aaa") == true && shown?.cursor == shown.map { DisplayWidth.of($0.text) },
                "the line scrolls to keep the cursor (at its end) on screen: \(String(describing: shown))")
        test.host.terminalInput([.key(.enter)])
        test.settle()
        let elapsed = ContinuousClock.now - started
        #expect(test.lines == ["added\t4092"])
        #expect(elapsed < .seconds(10), "a 20 KB paste took \(elapsed)")
    }

    @Test func qQuitsUnlessTheControllerBindsIt() throws {
        let quits = try listApp(#"app.press("q")"#)
        #expect(quits.exitStatus == 0)

        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:viewDidLoad() self:key("q", "query", "ask") end
            function C:query() print("query") end
            app.push(C)
            app.press("q")
            """)
        test.settle()
        #expect(test.lines == ["query"])
        #expect(test.exitStatus == nil)
    }

    @Test func ctrlCQuitsWithTheInterruptStatus() throws {
        let test = try listApp(#"app.press("ctrl-c")"#)
        #expect(test.exitStatus == 130)
    }

    @Test func escAndBackspacePopOnlyWhenThereIsSomethingBelow() throws {
        let test = try TestHost()
        test.run("""
            local A = controller("A")
            local B = controller("B")
            function B:viewDidDisappear() print("B gone") end
            app.push(A)
            app.press("esc")
            app.push(B)
            app.press("esc")
            timer.after(1, function() print(#app.stack) app.press("backspace") end)
            timer.after(2, function() print(#app.stack) app.exit(0) end)
            """)
        test.settle()
        test.advance(seconds: 3)
        #expect(test.lines == ["B gone", "1", "1"])
    }

    @Test func questionMarkListsTheKeysAndCommands() throws {
        let test = try listApp(#"app.press("?")"#)
        let text = test.stdout
        #expect(text.contains("keys of List:"))
        #expect(text.contains("  a       add an item"))
        #expect(text.contains("  f5      reload"))
        #expect(text.contains("  ?       help"))
        #expect(text.contains("  q       quit"))
        #expect(text.contains("  ctrl-c  quit"))
        #expect(text.contains("commands (after ':'):"))
    }

    @Test func aKeyWhoseMethodRaisesIsReportedAndTheAppRunsOn() throws {
        let test = try listApp(#"app.press("x", "a")"#)
        #expect(test.stderr.contains("error in List:explode"))
        #expect(test.stderr.contains("boom"))
        #expect(test.lines == ["add\ta"])
        #expect(test.exitStatus == nil)
    }

    @Test func declaredArgumentsAreConvertedAndAWrongOneIsNamed() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:viewDidLoad()
              self:command("add", "add", "add ITEM [QTY]", { args = { "item: string", "qty: integer?" } })
            end
            function C:add(item, qty) print(item, qty, math.type(qty)) end
            app.push(C)
            """)
        test.settle()
        for line in ["add milk 2", "add bread", "add eggs two", "add"] { test.host.receiveCommandLine(line) }
        test.settle()
        #expect(test.lines == ["milk\t2\tinteger", "bread\tnil\tnil"])
        #expect(test.stderr.contains("command 'add': argument #2 'qty' must be an integer, got 'two'"))
        #expect(test.stderr.contains("command 'add': missing argument #1 'item' (string)"))
        #expect(test.exitStatus == nil)
    }

    @Test func tabCompletesCommandNamesThenArguments() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:viewDidLoad()
              self:command("add", "add", "add ITEM", { args = { "item: string" },
                complete = function(index, prefix) return { "milk", "mint", "bread" } end })
              self:command("urgent", "urgent", "mark", { args = { "on: boolean" } })
            end
            function C:add() end
            function C:urgent() end
            app.push(C)
            """)
        test.settle()
        #expect(test.host.completions(before: "a").candidates == ["add"])
        #expect(test.host.completions(before: "").candidates == ["add", "urgent", "help", "quit"])
        let argument = test.host.completions(before: "add mi")
        #expect(argument.candidates == ["milk", "mint"])
        #expect(argument.replacing == 2)
        #expect(test.host.completions(before: "urgent ").candidates == ["true", "false"])
        #expect(test.host.completions(before: "nothing x").candidates == [])
    }

    /// A `complete` that returns no list (a string, nothing) offered nothing without a word
    /// (attack new25, D27); one that raises was already reported.
    @Test func aCompleteThatReturnsNoListIsWarned() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:viewDidLoad()
              self:command("add", "add", "add ITEM", { args = { "item: string" }, complete = function() return "notalist" end })
            end
            function C:add() end
            app.push(C)
            """)
        test.settle()
        #expect(test.host.completions(before: "add m").candidates == [])
        #expect(test.stderr.contains("warning: test.lua:3: command 'add': complete returned a string, not a list of words, so Tab offered nothing: "
                                     + "return a table, as return { \"milk\", \"oat milk\" } (an empty one offers nothing)"), "\(test.stderr)")
    }

    @Test func badCommandOptionsAreClearErrors() throws {
        let test = try TestHost()
        test.run("""
            local C = controller("C")
            function C:go() end
            local c = app.push(C)
            print(select(2, pcall(c.command, c, "go", "go", "", { args = { "qty: int" } })))
            print(select(2, pcall(c.command, c, "go", "go", "", { complete = 3 })))
            """)
        test.settle()
        #expect(test.lines.first?.contains("options.args[1] must read \"name: type\" with a type of string, integer, number or boolean") == true)
        #expect(test.lines.dropFirst().first?.contains("options.complete must be a function(argIndex, prefix), got number") == true)
    }

    /// O(change): one selection move on a 10,000-row table writes the two rows that changed
    /// (the old selection, the new one) and nothing else, inside synchronized-output marks.
    @Test func aSelectionMoveOnA10000RowTableWritesTwoRows() throws {
        let test = try TestHost()
        test.run("""
            local rows = {}
            for i = 1, 10000 do rows[i] = { name = "row " .. i, n = i } end
            local C = controller("T")
            function C:loadView() return view.table { id = "t", selectable = true, columns = { "name", "n" }, rows = rows } end
            app.push(C)
            """)
        test.settle()
        let before = test.host.presenter.frame(width: 40, height: 24)
        test.host.pressTerminalKeys(["down"])
        test.settle()
        let after = test.host.presenter.frame(width: 40, height: 24)
        let bytes = after.changes(from: before)
        #expect(bytes.components(separatedBy: ";1H").count - 1 == 2, "\(bytes.debugDescription)")
        #expect(bytes.hasPrefix("\u{1B}[?2026h") && bytes.hasSuffix("\u{1B}[?2026l"))
        #expect(after.reversed.contains(3), "the selected row (header, rule, row 1, row 2) in reverse video")
        // Each written row is padded to the width, so it covers what the row showed before.
        let written = bytes.components(separatedBy: ";1H").dropFirst().map { $0.replacingOccurrences(of: "\u{1B}[7m", with: "") }
        #expect(written.allSatisfy { $0.hasPrefix("> row 2") || $0.hasPrefix("  row 1") }, "\(written)")
        #expect(written.allSatisfy { $0.prefix { $0 != "\u{1B}" }.count == 40 }, "\(written.map(\.debugDescription))")
        test.host.pressTerminalKeys(["end"])
        test.settle()
        let last = test.host.presenter.frame(width: 40, height: 24)
        #expect(last.rows[22].hasPrefix("> row 10000"), "\(last.rows[22])")
        #expect(after.changes(from: after) == "", "an unchanged frame writes nothing")
    }
}
