import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A controller app driven from a real terminal (DESIGN.md "Interaction on a terminal"): the
/// binary runs on a pseudo-terminal, keys are typed into it, the screen is replayed through
/// ``TerminalScreen``, and after every way out the terminal's modes are checked: echo and
/// canonical input back, signal keys back, the main screen back, the cursor shown, mouse
/// reporting off.
@Suite struct KeyboardTerminalTests {
    /// Binds `a` (updates the view and prints), `e` (app.exit(3)), `x` (raises), `s` (loops
    /// forever); `late` runs after the push.
    static func script(late: String = "") -> String {
        """
        local C = controller("Keys")
        function C:loadView() return view.stack { view.text { id = "title", text = "pressed: none" } } end
        function C:viewDidLoad()
          self:key("a", "pressA", "say a")
          self:key("e", "leave", "exit 3")
          self:key("x", "explode", "fail")
          self:key("s", "spin", "loop forever")
        end
        function C:spin() while true do end end
        function C:pressA() self.view.title.text = "pressed: a" print("printed while on screen") end
        function C:leave() app.exit(3) end
        function C:explode() error("kaboom") end
        app.push(C)
        \(late)
        """
    }

    /// Runs `source` as `file` in a new sandbox (the command line's history in it) on a 100 x 12
    /// terminal, and waits for a line with `showing`.
    private func start(_ source: String = script(), file: String = "keys.lua", options: [String] = [],
                       showing: String = "pressed: none", environment: [String: String?] = [:],
                       sourceLocation: SourceLocation = #_sourceLocation) async throws -> (InteractiveTerminal, Sandbox) {
        try await InteractiveTerminal.app(source, file: file, options: options, showing: showing, environment: environment,
                                          sourceLocation: sourceLocation)
    }

    private func expectRestored(_ terminal: InteractiveTerminal, sourceLocation: SourceLocation = #_sourceLocation) {
        terminal.expectRestored(sourceLocation: sourceLocation)
    }

    @Test func keysReachTheControllerAndQQuits() async throws {
        let (terminal, _) = try await start()
        #expect(terminal.screen.onAlternateScreen)
        #expect(terminal.screen.lines.last?.contains("a say a  e exit 3  x fail  s loop forever  ? help  q quit") == true)
        terminal.type("a")
        await terminal.waitFor(line: "pressed: a")
        await terminal.waitFor(line: "│ printed while on screen")
        terminal.type("?")
        await terminal.waitFor(line: "keys of Keys:")
        terminal.type("z")  // closes the help
        await terminal.waitFor(line: "pressed: a")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
        #expect(terminal.screen.transcript.contains("printed while on screen"), "what was printed is written out afterwards")
    }

    @Test func aHandlerErrorShowsOnTheStatusLineAndTheAppRunsOn() async throws {
        let (terminal, _) = try await start()
        terminal.type("x")
        await terminal.waitFor(line: "│ crescent: error in Keys:explode")
        terminal.type("a")
        await terminal.waitFor(line: "pressed: a")
        terminal.type("q")
        #expect(await terminal.finish() == 1, "quit does not forgive the error")
        expectRestored(terminal)
        #expect(terminal.screen.transcript.contains { $0.contains("kaboom") }, "the traceback is written out afterwards")
    }

    /// Ctrl-C twice always quits, even a script stuck in a loop: the first stops the handler
    /// once it has run half a second (KeyboardTerminalBusyTests), or quits before that.
    @Test func ctrlCStopsEvenAStuckScript() async throws {
        let (terminal, _) = try await start()
        terminal.type("s")
        try await Task.sleep(for: .milliseconds(200))
        terminal.type("\u{3}\u{3}")
        #expect(await terminal.finish() == 130)
        expectRestored(terminal)
    }

    @Test func appExitRestores() async throws {
        let (terminal, _) = try await start()
        terminal.type("e")
        #expect(await terminal.finish() == 3)
        expectRestored(terminal)
    }

    @Test func anUncaughtErrorInTheMainChunkRestores() async throws {
        let sandbox = try Sandbox()
        let path = try sandbox.write("keys.lua", Self.script(late: "timer.after(0.3, function() end) error('late failure')"))
        let terminal = try InteractiveTerminal(["--no-plugins", path], directory: sandbox.path, columns: 100, rows: 12)
        #expect(await terminal.finish() == 1)
        expectRestored(terminal)
        #expect(terminal.screen.transcript.contains { $0.contains("late failure") })
    }

    static let signalStatuses: [(Int32, Int32)] = [(SIGINT, 130), (SIGTERM, 143), (SIGHUP, 129)]

    @Test(arguments: Self.signalStatuses)
    func signalsRestore(signal: Int32, status: Int32) async throws {
        let (terminal, _) = try await start()
        kill(terminal.pid, signal)
        #expect(await terminal.finish() == status)
        expectRestored(terminal)
    }

    /// The other signals whose default action ends the process (a person's kill -QUIT, ulimit
    /// -t's SIGXCPU, an unhandled SIGUSR1 or SIGALRM) give the terminal back before it dies of them.
    @Test(arguments: [SIGQUIT, SIGXCPU, SIGUSR1, SIGALRM])
    func endingSignalsRestore(signal: Int32) async throws {
        let (terminal, _) = try await start(environment: ["SWIFT_BACKTRACE": "enable=no"])
        kill(terminal.pid, signal)
        _ = await terminal.finish(expectedSignals: [signal])
        expectRestored(terminal)
    }

    /// Text from data (a store, a feed, a remote command) never acts on the terminal: escape
    /// sequences and control characters in a view's text, a table's cells, the title and a key's
    /// help are not written raw (they left the alternate screen, retitled the window, cleared it),
    /// but as escapes.
    @Test func textFromDataNeverActsOnTheTerminal() async throws {
        let source = #"""
            local evil = "\27]0;PWNED\7\27[2J\27[?1049l\27[?1000l\r\n\0"
            local C = controller("Evil")
            function C:init() self.title = "title" .. evil end
            function C:loadView()
              return view.stack { view.text { text = "shown" .. evil .. "safe" },
                view.table { id = "t", selectable = true, columns = { "name" }, rows = { { name = "cell" .. evil } } } }
            end
            function C:viewDidLoad() self:key("r", "refresh", "help" .. evil) end
            function C:refresh() end
            app.push(C)
            """#
        let (terminal, _) = try await start(source, file: "evil.lua", showing: "safe")
        terminal.type("?")
        await terminal.waitFor(line: "keys of Evil")
        terminal.type(" ")
        await terminal.waitFor(line: "> cell")
        let written = terminal.text
        #expect(!written.contains("\u{1B}]"), "an OSC was written: \(written.debugDescription)")
        #expect(!written.contains("\u{07}") && !written.contains("\u{0}"), "\(written.debugDescription)")
        #expect(!written.contains("\u{7}\u{1B}[2J") && !written.contains("PWNED[2J\u{1B}"), "\(written.debugDescription)")
        #expect(!written.contains("\u{1B}[?1049l") && !written.contains("\u{1B}[?1000l"), "\(written.debugDescription)")
        // Shown as escapes (the sequence's parameters alone read as text: attack new28t D6).
        #expect(terminal.screen.lines.contains { $0.contains(#"> cell\u{1B}]0;PWNED\u{7}\u{1B}[2J\u{1B}[?1049l"#) }, "\(terminal.screen.lines)")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    /// A terminal that claims 65535 x 65535 (any program on it can set that size) costs a frame
    /// of at most 2,000 x 1,000: the host allocated without bound and stopped reading keys.
    @Test func aHugeTerminalSizeIsLaidOutWithinBounds() async throws {
        let (terminal, _) = try await start()
        terminal.resize(columns: 65535, rows: 65535)
        try await Task.sleep(for: .seconds(1))
        terminal.resize(columns: 100, rows: 12)
        terminal.type("a")
        await terminal.waitFor(line: "pressed: a")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    /// Past the transcript's 64 KiB, what a run printed on the whole terminal is written out
    /// from a whole line, after a line saying how much was dropped (it was cut mid-line, silently).
    @Test func droppedOutputIsSaidAndCutAtALine() async throws {
        let source = """
            local C = controller("Printer")
            function C:loadView() return view.text { text = "ready" } end
            function C:viewDidLoad() self:key("p", "flood", "print a lot") end
            function C:flood() for i = 1, 20000 do print("line", i) end app.exit(0) end
            app.push(C)
            """
        let (terminal, _) = try await start(source, file: "flood.lua", showing: "ready")
        terminal.type("p")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
        let after = terminal.text.components(separatedBy: "\u{1B}[?1049l").last ?? ""
        let lines = after.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(lines.first?.hasPrefix("crescent: the first ") == true && lines.first?.contains("bytes printed while the app had the terminal were dropped") == true,
                "\(lines.prefix(3))")
        #expect(lines.dropFirst().first?.hasPrefix("line\t") == true, "a whole line first: \(lines.prefix(3))")
        #expect(lines.last == "line\t20000", "\(lines.suffix(2))")
    }

    /// io.write and io.stdout:write from a handler are held back with print's output and
    /// written out after the terminal is given back (they went onto the alternate screen raw,
    /// scrolling the frame, and were lost with it).
    @Test func ioWriteIsHeldBackLikePrint() async throws {
        let source = """
            local C = controller("Writer")
            function C:loadView() return view.text { text = "ready" } end
            function C:viewDidLoad() self:key("w", "writes", "write") end
            function C:writes() io.write("IOWRITE-NL\\n") io.stdout:write("STDOUT-WRITE\\n") print("PRINTED") end
            app.push(C)
            """
        let (terminal, _) = try await start(source, file: "writer.lua", showing: "ready")
        terminal.type("w")
        await terminal.waitFor(line: "PRINTED")
        #expect(terminal.screen.lines.first == "ready", "the frame did not scroll: \(terminal.screen.lines)")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
        let after = terminal.text.components(separatedBy: "\u{1B}[?1049l").last ?? ""
        #expect(after.contains("IOWRITE-NL\r\nSTDOUT-WRITE\r\nPRINTED"), "\(after.debugDescription)")
    }

    /// Tab never makes the command line longer than its 4,096 characters: a candidate that
    /// would is not offered (a 10,000-character one was inserted whole and run).
    @Test func completionKeepsTheCommandLineWithinItsLimit() async throws {
        let source = """
            local C = controller("Long")
            function C:loadView() return view.text { text = "ready" } end
            function C:viewDidLoad()
              self:key("r", "refresh", "refresh")
              self:command("add", "add", "add ITEM", { args = { "item: string?" },
                complete = function() return { string.rep("a", 10000) } end })
            end
            function C:refresh() end
            function C:add(item) print("ADD " .. tostring(item and #item)) end
            app.push(C)
            """
        let (terminal, _) = try await start(source, file: "long.lua", showing: "ready")
        terminal.type(":add \t")
        try await Task.sleep(for: .milliseconds(300))
        terminal.type("\r")
        await terminal.waitFor(line: "ADD ")
        #expect(terminal.screen.lines.contains { $0.contains("ADD nil") }, "\(terminal.screen.lines)")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    /// A paste whose end mark never comes (a connection cut in the middle of one) is ended after
    /// a second without bytes: what came is the paste, and keys, Ctrl-C first, work again.
    @Test func aPasteWithoutItsEndStopsTakingKeys() async throws {
        let (terminal, _) = try await start()
        terminal.type("\u{1B}[200~hello")
        await terminal.waitFor("the paste on the command line") { lines in lines.last?.hasPrefix(":hello") == true }
        terminal.type("\u{3}")
        #expect(await terminal.finish() == 130)
        expectRestored(terminal)
    }

    @Test func theTimeLimitRestores() async throws {
        let (terminal, _) = try await start(options: ["--timeout", "10"])
        #expect(await terminal.finish() == 1)
        expectRestored(terminal)
    }

    /// A crash of the Swift side (here SIGABRT, what a failed precondition or abort() raises;
    /// a trap's SIGILL and a fault's SIGSEGV take the same guard) still gives the terminal back
    /// before the process dies of it.
    @Test func aSwiftSideCrashRestores() async throws {
        // Without the Swift runtime's backtracer, which on a terminal waits for a person.
        let (terminal, _) = try await start(options: ["--timeout", "30"], environment: ["SWIFT_BACKTRACE": "enable=no"])
        kill(terminal.pid, SIGABRT)
        _ = await terminal.finish(expectedSignals: [SIGABRT])
        expectRestored(terminal)
    }

    @Test func ctrlLAndResizeRedrawTheWholeScreen() async throws {
        let (terminal, _) = try await start()
        let before = terminal.text.components(separatedBy: "\u{1B}[2J").count
        terminal.type("\u{C}")
        await terminal.waitFor("a whole redraw after ctrl-l") { _ in
            terminal.text.components(separatedBy: "\u{1B}[2J").count > before
        }
        let afterRedraw = terminal.text.components(separatedBy: "\u{1B}[2J").count
        terminal.resize(columns: 50, rows: 10)
        await terminal.waitFor("a whole redraw after the resize") { _ in
            terminal.text.components(separatedBy: "\u{1B}[2J").count > afterRedraw
        }
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    @Test func aKeyMovesOnlyTheLinesThatChangedInsideSynchronizedOutput() async throws {
        let (terminal, _) = try await start()
        let before = terminal.text.utf8.count
        terminal.type("a")
        await terminal.waitFor(line: "pressed: a")
        let frame = String(terminal.text.utf8.dropFirst(before)) ?? ""
        #expect(frame.hasPrefix("\u{1B}[?2026h"))
        #expect(frame.contains("\u{1B}[?2026l"))
        #expect(!frame.contains("\u{1B}[2J"), "no whole redraw for one changed line")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
    }

    @Test func ctrlZGivesTheTerminalBackUntilResumed() async throws {
        let (terminal, _) = try await start()
        let entered = terminal.text.components(separatedBy: "\u{1B}[?1049h").count
        terminal.type("\u{1A}")
        if try await terminal.waitUntilStopped() {
            expectRestored(terminal)
            kill(terminal.pid, SIGCONT)
        }
        await terminal.waitFor("the app back on the alternate screen") { _ in
            terminal.text.components(separatedBy: "\u{1B}[?1049h").count > entered && terminal.screen.onAlternateScreen
        }
        terminal.type("a")
        await terminal.waitFor(line: "pressed: a")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    @Test func keysClicksAndTheWheelMoveTheSelection() async throws {
        let source = """
            local Pick = controller("Pick")
            function Pick:init() self.title = "Letters" end
            function Pick:viewDidLoad() self:key("r", "refresh", "refresh") end
            function Pick:refresh() end
            function Pick:loadView()
              return view.list { id = "items", selectable = true, items = { "alpha", "beta", "gamma", "delta" } }
            end
            function Pick:selectionChanged(id, index, item) print("changed " .. index .. " " .. item) end
            function Pick:didSelect(id, index, item) print("chose " .. item) end
            app.push(Pick)
            """
        let (terminal, _) = try await start(source, showing: "> - alpha")
        #expect(terminal.screen.lines.first == "Letters", "the title line")
        terminal.type("\u{1B}[<0;5;4M\u{1B}[<0;5;4m")   // a click on screen row 4: gamma
        await terminal.waitFor(line: "> - gamma")
        await terminal.waitFor(line: "│ changed 3 gamma")
        terminal.type("\u{1B}[<65;5;4M")                 // the wheel, down
        await terminal.waitFor(line: "> - delta")
        terminal.type("\u{1B}[A")                        // up
        await terminal.waitFor(line: "> - gamma")
        terminal.type("\r")
        await terminal.waitFor(line: "│ chose gamma")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    @Test func theCommandLineRunsCommandsWithCompletionAndHistory() async throws {
        let source = """
            local C = controller("Shop")
            function C:loadView() return view.text { text = "the shop" } end
            function C:viewDidLoad()
              self:key("r", "refresh", "refresh")
              self:command("add", "add", "add ITEM", { args = { "item: string", "qty: integer?" } })
            end
            function C:refresh() end
            function C:add(item, qty) print("added " .. item .. " x" .. tostring(qty)) end
            app.push(C)
            """
        let (terminal, sandbox) = try await start(source, file: "shop.lua", showing: "the shop")
        terminal.type(":ad\t")
        await terminal.waitFor("the command completed") { lines in lines.last == ":add" }
        terminal.type(" milk 2\r")
        await terminal.waitFor(line: "│ added milk x2")
        terminal.type(":add eggs two\r")
        await terminal.waitFor(line: "argument #2 'qty' must be an")
        terminal.type(":\u{1B}[A")
        await terminal.waitFor("the history's last command") { lines in lines.last?.hasPrefix(":add eggs two") == true }
        terminal.type("\u{1B}")
        await terminal.waitFor("the command line closed") { lines in lines.last?.hasPrefix("r refresh") == true }
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
        let history = try String(contentsOfFile: sandbox.path + "/history.shop", encoding: .utf8)
        #expect(history.contains("add milk 2"), "the history is kept per script")
    }

    /// Tab on the `:` line: a command's name, then its argument from the command's `complete`
    /// function (one candidate is typed, several are listed on the status line, a common start
    /// is typed), then from its declared type (a boolean's true and false).
    @Test func tabCompletesACommandAndThenItsArguments() async throws {
        let source = """
            local C = controller("Pantry")
            function C:loadView() return view.text { text = "the pantry" } end
            function C:viewDidLoad()
              self:key("r", "refresh", "refresh")
              self:command("stock", "stock", "stock ITEM", { args = { "item: string" },
                complete = function(index, prefix) return { "milk", "mint", "eggs" } end })
              self:command("keep", "keep", "keep ITEM FRESH", { args = { "item: string", "fresh: boolean" } })
            end
            function C:refresh() end
            function C:stock(item) print("stocked " .. item) end
            function C:keep(item, fresh) print("kept " .. item .. " " .. tostring(fresh)) end
            app.push(C)
            """
        let (terminal, _) = try await start(source, file: "pantry.lua", showing: "the pantry")
        /// The command line holds `line` (the last message may show beside it).
        func waitForLine(_ line: String) async {
            await terminal.waitFor("the command line '\(line)'") { _ in
                terminal.screen.lines.last == line || terminal.screen.lines.last?.hasPrefix(line + "   │") == true
            }
        }
        terminal.type(":st\t")
        await waitForLine(":stock")
        terminal.type(" e\t")
        await waitForLine(":stock eggs")
        terminal.type("\r")
        await terminal.waitFor(line: "│ stocked eggs")
        terminal.type(":stock \t")
        await terminal.waitFor(line: "│ milk  mint  eggs")
        terminal.type("m\t")
        await waitForLine(":stock mi")
        terminal.type("n\t\r")
        await terminal.waitFor(line: "│ stocked mint")
        terminal.type(":ke\t milk f\t")
        await waitForLine(":keep milk false")
        terminal.type("\r")
        await terminal.waitFor(line: "│ kept milk false")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    /// A resize redraws the whole screen at the new size: a 30-row list shows the rows that fit
    /// above the status line (the selected one among them) and the status line sits on the new
    /// last row, cut to the new width.
    @Test func aResizeRedrawsAtTheNewSize() async throws {
        let source = """
            local L = controller("Long")
            function L:viewDidLoad() self:key("r", "refresh", "refresh the whole long list of rows") end
            function L:refresh() end
            function L:loadView()
              local items = {}
              for i = 1, 30 do items[i] = "row " .. i .. " " .. string.rep("=", 60) end
              return view.list { id = "rows", selectable = true, items = items }
            end
            app.push(L)
            """
        let (terminal, _) = try await start(source, file: "long.lua", showing: "> - row 1 ")
        terminal.type("jjjjj")
        await terminal.waitFor(line: "> - row 6 ")
        #expect(terminal.screen.lines.count == 12)
        terminal.resize(columns: 40, rows: 6)
        await terminal.waitFor("the screen at 40 x 6") { _ in
            let lines = terminal.screen.lines
            return lines.count == 6 && lines.last?.hasPrefix("r refresh") == true && lines.contains { $0.hasPrefix("> - row 6 ") }
        }
        let lines = terminal.screen.lines
        #expect(lines.allSatisfy { $0.count <= 40 }, "every line cut to the new width: \(lines)")
        #expect(lines.dropLast().allSatisfy { $0.hasPrefix("  - row ") || $0.hasPrefix("> - row ") }, "rows above the status line: \(lines)")
        terminal.type("k")
        await terminal.waitFor("the selection moved at the new size") { _ in terminal.screen.lines.contains { $0.hasPrefix("> - row 5 ") } }
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    /// 20,000 prints from one key handler: the status line shows the last one and the app
    /// answers its next key within seconds (each print once cost time in proportion to the ones
    /// before it: 20,000 took more than 95 s, the app frozen meanwhile).
    @Test func manyPrintsFromOneKeyShowTheLastAndTheAppAnswersOn() async throws {
        let source = """
            local C = controller("Printer")
            function C:loadView() return view.text { id = "title", text = "ready" } end
            function C:viewDidLoad() self:key("p", "flood", "print a lot") end
            function C:flood() for i = 1, 20000 do print("line", i) end self.view.title.text = "printed" end
            app.push(C)
            """
        let (terminal, _) = try await start(source, file: "printer.lua", showing: "ready")
        terminal.type("p")
        await terminal.waitFor(line: "│ line 20000", within: 30)
        #expect(terminal.screen.lines.first == "printed")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
        #expect(terminal.text.contains("line\t19999") && terminal.text.contains("line\t20000"), "the last prints are written out afterwards")
    }

    /// A 20 KB paste into the command line: the first 4,096 characters are typed, the status
    /// line says the rest was dropped, and Enter runs the command at once (the line was copied
    /// and drawn again for each character: 20 KB froze the app).
    @Test func aLongPasteIntoTheCommandLineIsCutAndRunsAtOnce() async throws {
        let source = """
            local C = controller("Paste")
            function C:loadView() return view.text { text = "paste here" } end
            function C:viewDidLoad() self:command("add", "add", "add ITEM", { args = { "item: string" } }) end
            function C:add(item) print("ADD " .. #item) end
            app.push(C)
            """
        let (terminal, _) = try await start(source, file: "paste.lua", showing: "paste here")
        terminal.type("add " + String(repeating: "a", count: 20_000))
        await terminal.waitFor(line: "│ the command line holds 4096 characters; the rest was dropped", within: 30)
        #expect(terminal.screen.lines.last?.hasPrefix("…aaa") == true, "the line scrolls to its cursor")
        terminal.type("\r")
        await terminal.waitFor(line: "│ ADD 4092", within: 30)
        terminal.type("quit\r")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    /// A bracketed paste is text for the command line, never keys: outside the command line it
    /// opens it (a pasted `r` refreshes nothing, a pasted newline presses no `enter`), inside it
    /// a pasted newline is a space and runs nothing; Enter then runs the line once.
    @Test func aPasteIsTextForTheCommandLineNeverKeys() async throws {
        let source = """
            local C = controller("Shop")
            function C:loadView() return view.text { text = "the shop" } end
            function C:viewDidLoad()
              self:key("r", "refresh", "refresh")
              self:command("add", "add", "add ITEM", { args = { "item: string", "qty: integer?" } })
            end
            function C:refresh() print("refreshed") end
            function C:add(item, qty) print("added " .. item .. " x" .. tostring(qty)) end
            app.push(C)
            """
        let (terminal, _) = try await start(source, file: "shop.lua", showing: "the shop")
        #expect(terminal.text.contains("\u{1B}[?2004h"), "bracketed paste is turned on")
        terminal.type("\u{1B}[200~r\rr\u{1B}[201~")
        await terminal.waitFor("the paste on the command line") { _ in terminal.screen.lines.last == ":r r" }
        terminal.type("\u{1B}")
        await terminal.waitFor("the command line closed") { _ in terminal.screen.lines.last?.hasPrefix("r refresh") == true }
        terminal.type(":\u{1B}[200~add milk\r\n2\u{1B}[201~")
        await terminal.waitFor("the pasted command, not run") { _ in terminal.screen.lines.last == ":add milk 2" }
        try await Task.sleep(for: .milliseconds(200))
        #expect(!terminal.screen.transcript.contains { $0.contains("added") }, "a pasted newline runs nothing")
        terminal.type("\r")
        await terminal.waitFor(line: "│ added milk x2")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
        #expect(!terminal.screen.transcript.contains { $0.contains("refreshed") }, "no pasted character was a key")
    }

    @Test func aControllerWithoutKeysKeepsTheCommandLineOpen() async throws {
        let source = """
            local C = controller("Plain")
            function C:loadView() return view.text { text = "no keys here" } end
            function C:viewDidLoad() self:command("add", "add", "add ITEM") end
            function C:add(item) print("added " .. item) end
            app.push(C)
            """
        let (terminal, _) = try await start(source, file: "plain.lua", showing: "no keys here")
        #expect(terminal.screen.lines.last == ":")
        terminal.type("add \"oat milk\"\r")
        await terminal.waitFor(line: "│ added oat milk")
        terminal.type("quit\r")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    /// Newcomer report finding 3: Esc over a controller with no keys leaves the command line
    /// closed, so the keys the status line shows work: `j` moves the list's selection, `q` quits.
    @Test func escOverAControllerWithoutKeysLeavesTheKeysToIt() async throws {
        let source = """
            local C = controller("Groceries")
            function C:loadView()
              return view.list { id = "items", selectable = true, items = { "milk", "eggs" } }
            end
            function C:viewDidLoad() self:command("add", "add", "add ITEM") end
            function C:add(item) end
            app.push(C)
            """
        let (terminal, _) = try await start(source, file: "groc.lua", showing: "milk")
        #expect(terminal.screen.lines.last == ":")
        terminal.type("\u{1B}")
        await terminal.waitFor("the status line's keys") { _ in terminal.screen.lines.last?.contains("q quit") == true }
        terminal.type("j")
        await terminal.waitFor(line: "> - eggs")
        #expect(terminal.screen.lines.last?.hasPrefix(":") != true, "\(terminal.screen.lines)")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    /// The issue's "done when": a new project's main.lua on a terminal answers its keys and quits
    /// with q.
    @Test func aNewProjectAnswersItsKeysAndQuitsWithQ() async throws {
        let sandbox = try Sandbox()
        let made = try await crescent(["init", "demo"], in: sandbox)
        #expect(made.status == 0, "\(made)")
        let terminal = try InteractiveTerminal(["--data-dir", sandbox.path + "/data", "main.lua"], directory: sandbox.path + "/demo",
                                               environment: ["CRESCENT_HISTORY": "/dev/null"], columns: 80, rows: 12)
        await terminal.waitFor(line: "Paris", within: 30)
        #expect(terminal.screen.lines.last?.hasPrefix("r refresh  ? help  q quit") == true)
        terminal.type("?")
        await terminal.waitFor(line: "keys of Place:")
        terminal.type(" r")
        await terminal.waitFor(line: "Paris")
        terminal.type(":refresh\r")
        await terminal.waitFor(line: "Paris")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    /// groceries.lua on an 80x12 terminal of its own with an empty list in `sandbox`, `a`
    /// pressed: the command line open with `add` typed.
    private static func groceriesAdding(in sandbox: Sandbox) async throws -> InteractiveTerminal {
        let script = CrescentProcess.packageRoot.appendingPathComponent("scripts/groceries.lua").path
        let terminal = try InteractiveTerminal(["--data-dir", sandbox.path + "/data", "--no-plugins", script], directory: sandbox.path,
                                               environment: ["CRESCENT_HISTORY": "/dev/null"], columns: 80, rows: 12)
        await terminal.waitFor(line: "0 items")
        terminal.type("a")
        await terminal.waitFor("the command line with add typed") { lines in lines.last == ":add" }
        return terminal
    }

    /// A detail that binds no keys, pushed over the list, answers the keys its status line
    /// shows: the first `esc` (or `backspace`) goes back and `q` quits; `:` opens the command
    /// line there. (The line used to open as the first key came and take it.)
    @Test func aDetailWithoutKeysAnswersTheKeysItsStatusLineShows() async throws {
        let sandbox = try Sandbox()
        let terminal = try await Self.groceriesAdding(in: sandbox)
        terminal.type("milk\r")
        await terminal.waitFor(line: "> milk")
        for back in ["\u{1B}", "\u{7F}"] {
            terminal.type("\r")
            await terminal.waitFor(line: "Groceries › milk")
            terminal.type(back)
            await terminal.waitFor(line: "1 item")
            #expect(terminal.screen.lines.first == "Groceries", "\(back.debugDescription): \(terminal.screen.lines)")
        }
        terminal.type("\r")
        await terminal.waitFor(line: "Groceries › milk")
        terminal.type(":x")
        await terminal.waitFor("the command line with x typed") { lines in lines.last?.hasPrefix(":x") == true }
        terminal.type("\u{1B}")
        await terminal.waitFor("the command line left") { lines in lines.last?.hasPrefix("esc back") == true }
        #expect(terminal.screen.lines.first == "Groceries › milk", "\(terminal.screen.lines)")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }

    @Test func groceriesAddsThroughTheCommandLineAndDeletesAfterAConfirmation() async throws {
        let sandbox = try Sandbox()
        let terminal = try await Self.groceriesAdding(in: sandbox)
        terminal.type("\"oat milk\" 2\r")
        await terminal.waitFor(line: "> oat milk")
        terminal.type("d")
        await terminal.waitFor(line: "delete oat milk? press d again")
        terminal.type("d")
        await terminal.waitFor(line: "0 items")
        terminal.type("q")
        #expect(await terminal.finish() == 0)
        expectRestored(terminal)
    }
}
