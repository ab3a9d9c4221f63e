import Foundation
import Testing

/// `--ui live` (issue 4): on a terminal the top controller's view is redrawn in place, only the
/// lines that changed are rewritten, the cursor is hidden while drawing and shown again, and
/// nothing is left behind. Checked by running the binary on a pseudo-terminal and replaying what
/// it wrote through a tiny terminal emulator (PseudoTerminal.swift).
@Suite struct LiveModeTests {
    /// A view that changes in four turns: a long title gets shorter, the list shrinks (the view
    /// loses lines), a table column gets wider, and at last only the title changes.
    static let updates = """
        local C = controller("Live")
        function C:loadView()
          return view.stack{
            view.text{ id = "title", text = "a rather long title line" },
            view.table{ id = "t", columns = { "name", "n" }, rows = {
              { name = "alpha", n = 1 }, { name = "beta", n = 2 }, { name = "gamma", n = 3 } } },
            view.progress{ id = "p", value = 0, total = 3, label = "step" },
            view.list{ id = "l", items = { "one", "two", "three", "four" } },
          }
        end
        function C:viewDidAppear()
          local step = 0
          self:every(0.03, function()
            step = step + 1
            if step == 1 then self.view.title.text = "short" self.view.p.value = 1
            elseif step == 2 then self.view.l:update({ "one" }) self.view.p.value = 2
            elseif step == 3 then self.view.t:set(2, "n", 20) self.view.p.value = 3
            elseif step == 4 then self.view.title.text = "final title"
            else app.exit(0) end
          end)
        end
        app.push(C)
        """

    /// The view after the last update, in 40 columns.
    static let finalView = [
        "final title",
        "name    n",
        "─────  ──",
        "alpha   1",
        "beta   20",
        "gamma   3",
        "[" + String(repeating: "#", count: 28) + "] 100% step",
        "- one",
    ]

    private func run(_ source: String, options: [String] = [], columns: Int = 40,
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> (TerminalRun, TerminalScreen) {
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", source)
        let run = try runOnPseudoTerminal(options + ["script.lua"], directory: sandbox.path, columns: columns,
                                          sourceLocation: sourceLocation)
        var screen = TerminalScreen(columns: columns, rows: 24)
        screen.feed(run.bytes)
        return (run, screen)
    }

    /// The frames `live` mode drew: each starts by hiding the cursor.
    private func frames(_ run: TerminalRun) -> [String] {
        run.text.components(separatedBy: "\u{1B}[?25l").dropFirst().map { String($0) }
    }

    /// The `n` of every `ESC[nA` in `text`.
    private func movesUp(_ text: String) -> [Int] {
        text.components(separatedBy: "\u{1B}[").dropFirst().compactMap { part in
            let digits = part.prefix { $0.isNumber }
            return part.dropFirst(digits.count).first == "A" ? Int(digits) : nil
        }
    }

    private func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func theScreenShowsExactlyTheViewAfterSeveralUpdates() throws {
        let (run, screen) = try run(Self.updates)
        #expect(run.status == 0, "\(run)")
        #expect(!run.timedOut)
        #expect(run.stderr == "", "\(run)")
        #expect(screen.transcript == Self.finalView, "\(run)")
        #expect(screen.scrollback.isEmpty, "the view was redrawn in place, nothing scrolled: \(run)")
        // No leftover characters from the longer first title or the removed list items.
        #expect(!screen.lines.joined().contains("rather"))
        #expect(!screen.lines.joined().contains("two"))
        #expect(!screen.lines.joined().contains("four"))
    }

    @Test func liveIsTheDefaultOnATerminal() throws {
        let (run, screen) = try run(Self.updates)
        #expect(run.text.contains("\u{1B}[?25l"), "drawn with cursor movements: \(run)")
        #expect(frames(run).count == 5, "the first view and four updates: \(run)")
        #expect(screen.transcript == Self.finalView)
    }

    @Test func explicitLiveAndPlainOnTheSameTerminal() throws {
        let (live, liveScreen) = try run(Self.updates, options: ["--ui", "live"])
        #expect(liveScreen.transcript == Self.finalView, "\(live)")
        let (plain, plainScreen) = try run(Self.updates, options: ["--ui", "plain"])
        #expect(!plain.text.contains("\u{1B}"), "plain mode writes no escape sequences: \(plain)")
        #expect(plainScreen.transcript.suffix(Self.finalView.count) == ArraySlice(Self.finalView), "\(plain)")
        #expect(plainScreen.transcript.count > 30, "plain mode prints every render, one after the other")
    }

    @Test func theLastUpdateRewritesOnlyTheLineThatChanged() throws {
        let (run, _) = try run(Self.updates)
        let drawn = frames(run)
        try #require(drawn.count == 5, "\(run)")
        // The first frame writes every line of the view (11), from where the cursor was.
        #expect(count("\u{1B}[2K", in: drawn[0]) == 11, "\(TerminalRun.escaped(drawn[0]))")
        #expect(movesUp(drawn[0]) == [], "nothing to move over the first time")
        // Step 1: the title and the progress bar.
        #expect(count("\u{1B}[2K", in: drawn[1]) == 2, "\(TerminalRun.escaped(drawn[1]))")
        // Step 2: the bar changes and the list loses three lines: erased below with ESC[J.
        #expect(count("\u{1B}[2K", in: drawn[2]) == 1, "\(TerminalRun.escaped(drawn[2]))")
        #expect(drawn[2].contains("\u{1B}[J"), "\(TerminalRun.escaped(drawn[2]))")
        // Step 3: the n column got wider, so the whole table (5 lines) and the bar.
        #expect(count("\u{1B}[2K", in: drawn[3]) == 6, "\(TerminalRun.escaped(drawn[3]))")
        // Step 4: only the title.
        let last = drawn[4]
        #expect(count("\u{1B}[2K", in: last) == 1, "\(TerminalRun.escaped(last))")
        #expect(movesUp(last) == [8], "back to the top of the 8-line view: \(TerminalRun.escaped(last))")
        #expect(movesUp(drawn[2]) == [11], "step 2 starts from the 11-line view")
        #expect(last.contains("final title"))
        #expect(!last.contains("alpha") && !last.contains("- one"), "unchanged lines are not written again")
    }

    @Test func theCursorIsShownAgainAndSitsBelowTheView() throws {
        let (run, screen) = try run(Self.updates)
        #expect(screen.cursorVisible, "\(run)")
        #expect(run.text.hasSuffix("\u{1B}[?25h"), "\(run)")
        #expect(screen.row == Self.finalView.count, "the cursor is on the line after the view")
        #expect(screen.column == 0)
    }

    @Test func printedTextAppearsAboveTheView() throws {
        let source = """
            local C = controller("Log")
            function C:loadView() return view.stack{ view.text{ id = "status", text = "working..." }, view.progress{ id = "p", value = 0, total = 2 } } end
            function C:viewDidAppear()
              self:after(0.03, function() print("first message") self.view.p.value = 1 end)
              self:after(0.06, function() print("second message\\nin two lines") end)
              self:after(0.09, function() self.view.status.text = "done" self.view.p.value = 2 end)
              self:after(0.12, function() app.exit(0) end)
            end
            app.push(C)
            """
        let (run, screen) = try run(source)
        #expect(run.status == 0, "\(run)")
        #expect(screen.transcript == [
            "first message",
            "second message",
            "in two lines",
            "done",
            "[" + String(repeating: "#", count: 33) + "] 100%",
        ], "\(run)")
    }

    @Test func wideCharactersAndATruncatedLineLeaveNoDebris() throws {
        let source = """
            local C = controller("Wide")
            function C:loadView()
              return view.stack{
                view.text{ id = "a", text = "日本語のテキストはとても長いのでこの行は切られます" },
                view.table{ id = "t", columns = { "city", "pop" }, rows = { { city = "東京", pop = 37 }, { city = "👨‍👩‍👧 home", pop = 4 } } },
              }
            end
            function C:viewDidAppear()
              self:after(0.03, function() self.view.a.text = "ok" self.view.t:set(1, "city", "Zürich") end)
              self:after(0.06, function() app.exit(0) end)
            end
            app.push(C)
            """
        let (run, screen) = try run(source, columns: 30)
        #expect(run.status == 0, "\(run)")
        #expect(screen.transcript == [
            "ok",
            "city     pop",
            "───────  ───",
            "Zürich    37",
            "👨‍👩‍👧 home    4",
        ], "\(run)")
        // The first frame's long line was cut to the 30 columns, so it never wrapped.
        let first = frames(run).first ?? ""
        #expect(first.contains("日本語のテキストはとても長い…\r\n"), "\(TerminalRun.escaped(first))")
    }

    @Test func messagesOnStderrDoNotGarbleTheView() throws {
        // stderr on the same terminal, as when a person runs a script: a log line and a handler
        // error are written while the view is on screen.
        let source = """
            local C = controller("Err")
            function C:loadView() return view.stack{ view.text{ id = "t", text = "before" }, view.text("second line") } end
            function C:viewDidAppear()
              self:after(0.03, function() log.warn("careful") end)
              self:after(0.06, function() error("boom") end)
              self:after(0.09, function() self.view.t.text = "after" end)
              self:after(0.12, function() app.exit(0) end)
            end
            app.push(C)
            """
        let sandbox = try Sandbox()
        try sandbox.write("script.lua", source)
        let run = try runOnPseudoTerminal(["script.lua"], directory: sandbox.path, stderrOnTerminal: true)
        var screen = TerminalScreen(columns: 40, rows: 24)
        screen.feed(run.bytes)
        #expect(run.status == 1, "app.exit(0) after a handler error still exits 1: \(run)")
        let transcript = screen.transcript
        do {
            #expect(transcript.suffix(2) == ["after", "second line"], "\(run)")
            #expect(transcript.filter { $0 == "second line" }.count == 1, "\(run)")
            #expect(transcript.contains { $0.contains("careful") }, "\(run)")
        }
    }
}

/// Template files next to the script, through the binary in plain mode with `COLUMNS` set.
@Suite struct ViewTemplateFileTests {
    @Test func aTemplateFileIsReadFromTheScriptsFolder() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("app/card.mustache", "== {{title}} ==\n{{#items}}* {{name}}: {{qty}}\n{{/items}}{{^items}}(empty)\n{{/items}}")
        try sandbox.write("app/main.lua", """
            local C = controller("Card")
            function C:loadView()
              return view.template{ id = "card", file = "card.mustache", data = { title = "Groceries", items = { { name = "milk", qty = 2 } } } }
            end
            function C:viewDidAppear()
              self:after(0.02, function() self.view.card:update({ title = "Groceries", items = {} }) end)
              self:after(0.04, function() app.exit(0) end)
            end
            app.push(C)
            """)
        // Run from the sandbox, not from app/: the file is found next to the script.
        let result = try await crescent(["--ui", "plain", "app/main.lua"], in: sandbox, environment: ["COLUMNS": "40"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "== Groceries ==\n* milk: 2\n\n== Groceries ==\n(empty)\n\n", "\(result)")
    }

    @Test func aLongTemplateLineIsCutToCOLUMNS() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("t.mustache", "{{text}}")
        try sandbox.write("main.lua", """
            local C = controller("C")
            function C:loadView() return view.template{ file = "t.mustache", data = { text = string.rep("x", 30) } } end
            app.push(C)
            timer.after(0.02, function() app.exit(0) end)
            """)
        let result = try await crescent(["--ui", "plain", "main.lua"], in: sandbox, environment: ["COLUMNS": "12"])
        #expect(result.stdout == "xxxxxxxxxxx…\n\n", "\(result)")
    }
}

/// The emulator the live-mode tests replay through: it must show leftovers when they are there.
@Suite struct LiveModeEmulatorTests {
    private func screen(_ text: String, columns: Int = 10, rows: Int = 4) -> TerminalScreen {
        var screen = TerminalScreen(columns: columns, rows: rows)
        screen.feed(Array(text.utf8))
        return screen
    }

    @Test func carriageReturnOverwritesAndLeavesTheRest() {
        #expect(screen("hello\rbye").lines[0] == "byelo")
        #expect(screen("hello\r\u{1B}[2Kbye").lines[0] == "bye")
        #expect(screen("hello\r\u{1B}[Kbye").lines[0] == "bye")
    }

    @Test func cursorUpAndEraseBelow() {
        let s = screen("one\r\ntwo\r\nthree\r\n\r\u{1B}[2A\u{1B}[J")
        #expect(s.lines == ["one", "", "", ""])
        #expect(s.row == 1 && s.column == 0)
        #expect(screen("a\r\nb\r\n\u{1B}[9Ax").lines == ["x", "b", "", ""], "moving up stops at the top")
    }

    @Test func lineFeedKeepsTheColumnAndScrollsAtTheBottom() {
        #expect(screen("ab\ncd").lines[1] == "  cd")
        let s = screen("1\r\n2\r\n3\r\n4\r\n5")
        #expect(s.scrollback == ["1"])
        #expect(s.lines == ["2", "3", "4", "5"])
        #expect(s.transcript == ["1", "2", "3", "4", "5"])
    }

    @Test func wideCharactersTakeTwoCellsAndLongLinesWrap() {
        #expect(screen("日本x").lines[0] == "日本x")
        let s = screen("日本語テキスト", columns: 6)
        #expect(s.lines.prefix(3) == ["日本語", "テキス", "ト"])
        #expect(screen("abcdefghij\r\n", columns: 10).lines.prefix(2) == ["abcdefghij", ""], "a full line then CRLF does not wrap twice")
    }

    @Test func cursorVisibilityAndOtherSequences() {
        #expect(!screen("\u{1B}[?25lx").cursorVisible)
        #expect(screen("\u{1B}[?25lx\u{1B}[?25h").cursorVisible)
        #expect(screen("\u{1B}[31mred\u{1B}[0m \u{1B}]0;title\u{7}ok").lines[0] == "red ok", "colours and titles are ignored")
    }
}

extension LiveModeTests {
    @Test func aViewTallerThanTheTerminal() throws {
        let source = """
            local C = controller("Tall")
            function C:loadView()
              local items = {}
              for i = 1, 30 do items[i] = "line " .. i end
              return view.stack{ view.text{ id = "t", text = "top v1" }, view.list{ items = items } }
            end
            function C:viewDidAppear()
              self:after(0.03, function() self.view.t.text = "top v2" end)
              self:after(0.06, function() app.exit(0) end)
            end
            app.push(C)
            """
        let (run, screen) = try run(source)
        #expect(run.status == 0, "\(run)")
        // 31 lines on 24 rows: the view is cut to 23 rows (22 lines and a note of what is left
        // out) so it can be redrawn in place; the update lands on its own line, nothing shifted.
        let expected = ["top v2"] + (1...21).map { "- line \($0)" } + ["… (9 more lines)"]
        #expect(Array(screen.transcript.suffix(23)) == expected, "\(run)")
    }
}
