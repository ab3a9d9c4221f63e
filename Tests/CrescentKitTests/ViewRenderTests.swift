@testable import CrescentKit
import Foundation
import LuaBridge
import Model
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

// MARK: - The harness the view tests share

/// A host on NIO's EmbeddedEventLoop for the view tests: like `TestHost`, with a `--ui` mode, an
/// optional script path (for template files next to the script), Lua run in later turns, and the
/// presented view tree at hand.
///
/// The presenter lays out in the test process's terminal width when stdout is a terminal, else
/// `COLUMNS`, else 80 (`ViewPresenter.width`). So that nothing depends on where the tests run,
/// tests compare printed renders only for views narrower than any terminal, and check
/// width-dependent layouts by rendering the presented tree at an explicit width (``render(width:)``)
/// — the same code the presenter runs — or through the binary with `COLUMNS` set.
final class ViewTestHost {
    let loop = EmbeddedEventLoop()
    let clock = ManualClock()
    let host: CrescentKit.Host
    private let output = TestHost.Output()
    private var consumed = 0

    init(ui: HostOptions.UIMode = .plain, plugins: [any Plugin] = []) throws {
        var options = HostOptions()
        options.ui = ui
        let output = self.output
        let console = Console(colors: false) { stream, text in
            switch stream {
            case .output: output.stdout.withLock { $0 += text }
            case .error: output.stderr.withLock { $0 += text }
            }
        }
        host = try CrescentKit.Host(loop: loop, options: options, console: console, plugins: plugins, clock: clock) { status in
            output.status.withLock { $0 = status }
        }
        let loop = NIOLoopBound(loop, eventLoop: loop)
        clock.onSettle { loop.value.run() }
    }

    deinit {
        // End the run (teardown closes the VM) so each test leaves nothing behind.
        if host.isRunning { host.finish(status: 0) }
    }

    /// Runs `source` as the main chunk of `test.lua` (or of the file at `scriptPath`).
    func run(_ source: String, scriptPath: String? = nil) {
        host.runMain(source: Array(source.utf8), chunkName: scriptPath.map { "@" + $0 } ?? "@test.lua",
                     scriptPath: scriptPath, argZero: "test.lua")
    }

    /// Pushes a controller `C` whose `loadView` returns `expression`; the instance is the global
    /// `ctl`, so later turns reach its components as `ctl.view.<id>`.
    func show(_ expression: String, setup: String = "") {
        run("""
            \(setup)
            local C = controller("C")
            function C:loadView()
              return \(expression)
            end
            ctl = app.push(C)
            """)
        settle()
    }

    /// Runs `source` in one loop turn of its own, as a handler would, and ends the turn (which
    /// renders). A Lua error is returned (nil when none).
    @discardableResult
    func turn(_ source: String) -> String? {
        let failure = Mutex<String?>(nil)
        let bytes = Array(source.utf8)
        host.enqueue { host in
            do throws(LuaError) {
                try host.vm.load(bytes, name: "=turn")
                try host.vm.call(arguments: 0, results: 0)
            } catch {
                failure.withLock { $0 = error.message }
            }
            host.vm.stack.setTop(0)
        }
        loop.run()
        return failure.withLock { $0 }
    }

    /// Runs every loop job due now, a few times over; virtual time does not move.
    func settle(rounds: Int = 5) {
        for _ in 0..<rounds { loop.advanceTime(by: .zero) }
    }

    func advance(seconds: Double) {
        clock.advance(by: .seconds(seconds: seconds))
    }

    var stdout: String { output.stdout.withLock { $0 } }
    var stderr: String { output.stderr.withLock { $0 } }
    var exitStatus: Int32? { output.status.withLock { $0 } }

    /// What was printed since the last call.
    func takeOutput() -> String {
        let all = stdout
        let start = all.utf8.index(all.utf8.startIndex, offsetBy: min(consumed, all.utf8.count))
        consumed = all.utf8.count
        return String(all[start...])
    }

    /// Renders printed so far (the presenter's count).
    var renderCount: Int { host.presenter.renders }

    /// The top controller's view tree.
    var root: ViewNode? { host.presenter.root }

    /// The component with `id` in the presented tree.
    func node(_ id: String) -> ViewNode? { root?.find(id) }

    /// The presented view laid out in `width` columns, lines joined by newlines.
    func render(width: Int) -> String {
        root?.lines(width: width).joined(separator: "\n") ?? ""
    }

    /// The width the presenter lays out in here.
    var presenterWidth: Int { host.presenter.width }
}

func padSpaces(_ count: Int) -> String { String(repeating: " ", count: count) }

/// The text of one plain-mode render as printed: the view's lines, then a blank line.
func renderText(_ lines: [String]) -> String { lines.joined(separator: "\n") + "\n\n" }

// MARK: - Golden text of every component

/// Golden-text tests of every component in plain mode (issue 4, "Rendering"): the exact text
/// printed, and the exact lines at explicit widths for layouts that depend on the width.
@Suite struct ViewRenderTests {
    /// Shows `expression` and returns the harness and the text printed for the first render.
    private func shown(_ expression: String, setup: String = "") throws -> (ViewTestHost, String) {
        let test = try ViewTestHost()
        test.show(expression, setup: setup)
        #expect(test.stderr == "", "\(test.stderr)")
        return (test, test.takeOutput())
    }

    // MARK: text

    @Test func textPrintsItsLines() throws {
        let (_, out) = try shown(#"view.text("hello, world")"#)
        #expect(out == "hello, world\n\n")
    }

    @Test func textKeepsEveryLineIncludingEmptyOnes() throws {
        let (_, out) = try shown(#"view.text{ text = "first\n\nthird\n  indented" }"#)
        #expect(out == renderText(["first", "", "third", "  indented"]))
    }

    @Test func textShowsNumbersAndBooleansAsTheyRead() throws {
        let (_, out) = try shown(#"view.stack{ view.text(42), view.text(2.0), view.text(1.5), view.text(true), view.text(-7) }"#)
        #expect(out == renderText(["42", "2", "1.5", "true", "-7"]))
    }

    @Test func textTruncatesEachLineWithAnEllipsis() throws {
        let (test, _) = try shown(#"view.text("short\nthis line is far too long for ten columns\n日本語のテキスト")"#)
        #expect(test.render(width: 10) == "short\nthis line…\n日本語の…")
        #expect(test.render(width: 11) == "short\nthis line …\n日本語のテ…")
        #expect(test.render(width: 1) == "…\n…\n…")
    }

    // MARK: list

    @Test func listUsesADashByDefault() throws {
        let (_, out) = try shown(#"view.list{ items = { "milk", "oat milk", 3, true } }"#)
        #expect(out == renderText(["- milk", "- oat milk", "- 3", "- true"]))
    }

    @Test func listTakesAMarker() throws {
        let (_, out) = try shown(#"view.stack{ view.list{ items = { "a", "b" }, marker = "*" }, view.list{ items = { "c" }, marker = "•" }, view.list{ items = { "d" }, marker = "1." } }"#)
        #expect(out == renderText(["* a", "* b", "• c", "1. d"]))
    }

    @Test func emptyListPrintsNothing() throws {
        let (_, out) = try shown(#"view.list{ id = "l", items = {} }"#)
        #expect(out == "", "an empty view prints nothing")
    }

    @Test func listFromAPositionalArray() throws {
        let test = try ViewTestHost()
        test.run(#"print(pcall(view.list, { "x", "y" }))"#)
        do {
            #expect(test.stdout.hasPrefix("true\t<view.list>"), "\(test.stdout)")
        }
    }

    @Test func listTruncatesLongItems() throws {
        let (test, _) = try shown(#"view.list{ items = { "a rather long item", "ok" } }"#)
        #expect(test.render(width: 10) == "- a rathe…\n- ok")
    }

    // MARK: table

    static let fruit = """
        view.table{ id = "t",
          columns = { "name", { key = "qty", title = "Qty" }, { key = "price", title = "Price", align = "right" }, "note" },
          rows = {
            { name = "apple", qty = 3, price = "€1.20", note = "crisp" },
            { name = "banana", qty = 12, price = "€0.25", note = "ripe" },
            { name = "cherry", qty = 150, price = "€12.00", note = "sweet" },
          } }
        """

    @Test func tableHasAHeaderASeparatorAndAlignedColumns() throws {
        let (_, out) = try shown(Self.fruit)
        // qty holds only numbers: right-aligned by itself; price is right-aligned because it says so.
        #expect(out == renderText([
            "name    Qty   Price  note",
            "──────  ───  ──────  ─────",
            "apple     3   €1.20  crisp",
            "banana   12   €0.25  ripe",
            "cherry  150  €12.00  sweet",
        ]))
    }

    @Test func tableShrinksTheWidestColumnsAndTruncatesWithAnEllipsis() throws {
        let (test, _) = try shown(Self.fruit)
        #expect(test.render(width: 26) == test.render(width: 80), "26 columns is the natural width")
        #expect(test.render(width: 20) == """
            na…  Qty  Pri…  note
            ───  ───  ────  ────
            ap…    3  €1.…  cri…
            ba…   12  €0.…  ripe
            ch…  150  €12…  swe…
            """)
        for width in [12, 16, 20, 25] {
            for line in test.render(width: width).split(separator: "\n") {
                #expect(DisplayWidth.of(String(line)) <= width, "width \(width): '\(line)'")
            }
        }
    }

    @Test func tableColumnWithAFixedWidth() throws {
        let (_, out) = try shown("""
            view.table{ columns = { { key = "id", width = 4 }, { key = "title", width = 8 }, "done" },
              rows = { { id = 1, title = "write tests", done = "yes" }, { id = 22, title = "ship", done = "no" } } }
            """)
        #expect(out == renderText([
            "  id  title     done",
            "────  ────────  ────",
            "   1  write t…  yes",
            "  22  ship      no",
        ]))
    }

    @Test func tableExplicitRightAlignmentOnText() throws {
        let (_, out) = try shown("""
            view.table{ columns = { { key = "k", title = "Key", align = "right" }, { key = "v", title = "Value" } },
              rows = { { k = "a", v = "x" }, { k = "long key", v = "yy" } } }
            """)
        #expect(out == renderText([
            "     Key  Value",
            "────────  ─────",
            "       a  x",
            "long key  yy",
        ]))
    }

    @Test func tableExplicitLeftAlignmentOnNumbers() throws {
        let (_, out) = try shown("""
            view.table{ columns = { { key = "k", title = "Key" }, { key = "v", title = "Value", align = "left" } },
              rows = { { k = "a", v = 1 }, { k = "long key", v = 100 } } }
            """)
        do {
            #expect(out == renderText([
                "Key       Value",
                "────────  ─────",
                "a         1",
                "long key  100",
            ]))
        }
    }

    @Test func tableAlignsCJKAndEmojiCellsByDisplayWidth() throws {
        let (_, out) = try shown("""
            view.table{ columns = { "city", "pop", "flag" }, rows = {
              { city = "東京", pop = 37, flag = "🇯🇵" },
              { city = "Zürich", pop = 1, flag = "🇨🇭" },
              { city = "서울", pop = 10, flag = "🇰🇷" },
              { city = "👨‍👩‍👧 home", pop = 4, flag = "👍🏽" },
            } }
            """)
        let expected = [
            "city     pop  flag",
            "───────  ───  ────",
            "東京      37  🇯🇵",
            "Zürich     1  🇨🇭",
            "서울      10  🇰🇷",
            "👨‍👩‍👧 home    4  👍🏽",
        ]
        #expect(out == renderText(expected))
        // The pop column ends at column 12 on every line (then two spaces before the flag).
        #expect(expected.map { DisplayWidth.of($0) } == [18, 18, 16, 16, 16, 16], "the last column is not padded")
        for line in expected.dropFirst(2) {
            let flag = line.components(separatedBy: "  ").last ?? ""
            #expect(DisplayWidth.of(String(line.dropLast(flag.count))) == 14, "\(line)")
        }
    }

    @Test func tableTruncatesWideCharactersWithoutSplittingThem() throws {
        let (test, _) = try shown("""
            view.table{ columns = { "name", "n" }, rows = { { name = "日本語のなまえ", n = 1 }, { name = "abc", n = 2 } } }
            """)
        // name shrinks to 8 columns: 日本語 (6) and the ellipsis fit, and the cell is padded to 8.
        #expect(test.render(width: 11) == """
            name      n
            ────────  ─
            日本語…   1
            abc       2
            """)
    }

    @Test func tableColumnsDefaultToTheFirstRowsKeysSorted() throws {
        let (_, out) = try shown(#"view.table{ rows = { { b = "x", a = 1 }, { b = "yy", a = 20 } } }"#)
        #expect(out == renderText([
            " a  b",
            "──  ──",
            " 1  x",
            "20  yy",
        ]))
    }

    @Test func tableRowsMayBeArraysInColumnOrder() throws {
        let (_, out) = try shown(#"view.table{ columns = { "name", "qty" }, rows = { { "tea", 2 }, { "coffee", 10 } } }"#)
        #expect(out == renderText([
            "name    qty",
            "──────  ───",
            "tea       2",
            "coffee   10",
        ]))
    }

    @Test func tableWithoutAHeader() throws {
        let (_, out) = try shown(#"view.table{ columns = { "a", "b" }, header = false, rows = { { a = "x", b = 1 }, { a = "yy", b = 22 } } }"#)
        #expect(out == renderText(["x    1", "yy  22"]))
    }

    @Test func tableMixedColumnStaysLeftAligned() throws {
        let (_, out) = try shown(#"view.table{ columns = { "v" }, rows = { { v = 1 }, { v = "two" }, { v = 3.5 } } }"#)
        #expect(out == renderText(["v", "───", "1", "two", "3.5"]))
    }

    // MARK: keyvalue

    @Test func keyvalueShowsARecordSortedByKey() throws {
        let (_, out) = try shown(#"view.keyvalue{ pairs = { name = "Ada", age = 36, city = "London", admin = true } }"#)
        #expect(out == renderText([
            "admin  true",
            "age    36",
            "city   London",
            "name   Ada",
        ]))
    }

    @Test func keyvalueKeepsTheOrderOfPairs() throws {
        let (_, out) = try shown(#"view.keyvalue{ pairs = { { "zeta", 1 }, { "alpha", "two" }, { key = "mid", value = 2.5 } } }"#)
        #expect(out == renderText([
            "zeta   1",
            "alpha  two",
            "mid    2.5",
        ]))
    }

    @Test func keyvalueAlignsWideKeysByDisplayWidth() throws {
        let (_, out) = try shown(#"view.keyvalue{ pairs = { { "名前", "Ada" }, { "id", 7 } } }"#)
        #expect(out == renderText(["名前  Ada", "id    7"]))
    }

    @Test func keyvalueCapsTheKeyColumnAtHalfTheWidth() throws {
        let (test, _) = try shown(#"view.keyvalue{ pairs = { { "a very long key name", "value" }, { "k", "a value far too long to fit" } } }"#)
        #expect(test.render(width: 20) == """
            a very lo…  value
            k           a value…
            """)
    }

    // MARK: progress

    @Test func progressShowsABarThePercentAndTheLabel() throws {
        let (test, out) = try shown("""
            view.stack{
              view.progress{ value = 3, total = 10, label = "loading" },
              view.progress(0),
              view.progress(0.5),
              view.progress{ value = 1 },
              view.progress{ value = 10, total = 10, label = "done" },
            }
            """)
        // Wide enough for the bar's 40-column maximum. (A value outside 0...total and a total
        // of 0 are errors now: HardeningNewcomerThirdTests.viewMistakesThatRenderedWrongAreErrors.)
        let expected = [
            "[############----------------------------] 30% loading",
            "[----------------------------------------] 0%",
            "[####################--------------------] 50%",
            "[########################################] 100%",
            "[########################################] 100% done",
        ]
        #expect(test.render(width: 80) == expected.joined(separator: "\n"))
        if test.presenterWidth >= 60 { #expect(out == renderText(expected)) }
    }

    @Test func progressBarShrinksToTheWidth() throws {
        let (test, _) = try shown(#"view.progress{ value = 3, total = 10, label = "up" }"#)
        #expect(test.render(width: 20) == "[###--------] 30% up")
        #expect(test.render(width: 8) == "[-] 30%…", "at least one bar column; the line is cut to the width")
    }

    // MARK: stack, row, slot

    @Test func stackPutsChildrenUnderEachOther() throws {
        let (_, out) = try shown(#"view.stack{ view.text("title"), view.list{ items = { "a", "b" } }, view.stack{ view.text("nested") } }"#)
        #expect(out == renderText(["title", "- a", "- b", "nested"]))
    }

    @Test func stackGapPutsEmptyLinesBetweenChildren() throws {
        let (_, out) = try shown(#"view.stack{ gap = 1, view.text("one"), view.text("two\nlines"), view.keyvalue{ pairs = { k = "v" } } }"#)
        #expect(out == renderText(["one", "", "two", "lines", "", "k  v"]))
        let (_, out2) = try shown(#"view.stack{ gap = 2, view.text("a"), view.text("b") }"#)
        #expect(out2 == renderText(["a", "", "", "b"]))
    }

    @Test func rowPutsChildrenSideBySide() throws {
        let (test, _) = try shown(#"view.row{ view.text("left"), view.list{ items = { "one", "two" } } }"#)
        // Two children in 30 columns: 14 each, two spaces between; no trailing spaces.
        #expect(test.render(width: 30) == "left" + padSpaces(12) + "- one\n" + padSpaces(16) + "- two")
    }

    @Test func rowTruncatesEachChildToItsShare() throws {
        let (test, _) = try shown(#"view.row{ view.text("a long text here"), view.text("mid"), view.list{ items = { "x", "y" } } }"#)
        // Three children in 32 columns: (32 - 2 * 2) / 3 = 9 each.
        #expect(test.render(width: 32) == "a long t…  mid" + padSpaces(8) + "- x\n" + padSpaces(22) + "- y")
    }

    @Test func rowTrimsTrailingSpacesWhenTheLastChildIsShorter() throws {
        let (test, _) = try shown(#"view.row{ view.list{ items = { "a", "b" } }, view.text("x") }"#)
        #expect(test.render(width: 20) == "- a" + padSpaces(8) + "x\n- b")
    }

    @Test func emptySlotShowsNothing() throws {
        let (_, out) = try shown(#"view.stack{ view.text("top"), view.slot{ id = "main" }, view.text("bottom") }"#)
        #expect(out == renderText(["top", "bottom"]))
    }

    @Test func filledSlotShowsTheChildControllersView() throws {
        let test = try ViewTestHost()
        test.run("""
            local Child = controller("Child")
            function Child:loadView() return view.keyvalue{ id = "kv", pairs = { { "child", "here" } } } end
            local Parent = controller("Parent")
            function Parent:loadView()
              return view.stack{ view.text("top"), view.slot{ id = "main" }, view.text("bottom") }
            end
            function Parent:viewDidLoad() child = self:addChild(Child, "main") end
            parent = app.push(Parent)
            """)
        test.settle()
        #expect(test.takeOutput() == renderText(["top", "child  here", "bottom"]), "\(test.stderr)")
        #expect(test.turn(#"child.view.kv:update({ { "child", "changed" } })"#) == nil)
        #expect(test.takeOutput() == renderText(["top", "child  changed", "bottom"]), "a child's update renders the parent's view")
        #expect(test.turn("parent:removeChild(child)") == nil)
        #expect(test.takeOutput() == renderText(["top", "bottom"]), "removing the child empties the slot")
        #expect(test.stderr == "")
    }

    // MARK: template

    @Test func templateRendersMustacheWithSectionsAndLoops() throws {
        let (_, out) = try shown(#"""
            view.template{ id = "tpl", source = "Hello {{name}}!\n{{#items}}- {{title}} ({{qty}})\n{{/items}}{{^items}}nothing to do\n{{/items}}{{#admin}}admin\n{{/admin}}",
              data = { name = "Ann", admin = false, items = { { title = "tea", qty = 2 }, { title = "milk", qty = 1.5 } } } }
            """#)
        #expect(out == renderText(["Hello Ann!", "- tea (2)", "- milk (1.5)"]))
    }

    @Test func templateInvertedSectionForAnEmptyList() throws {
        let (_, out) = try shown(#"""
            view.template{ source = "{{#items}}- {{.}}\n{{/items}}{{^items}}nothing to do{{/items}}", data = { items = {} } }
            """#)
        #expect(out == renderText(["nothing to do"]))
    }

    @Test func templateUpdateReplacesItsData() throws {
        let (test, _) = try shown(#"view.template{ id = "tpl", source = "{{#items}}* {{.}}\n{{/items}}total {{n}}", data = { items = { "a" }, n = 1 } }"#)
        #expect(test.turn(#"ctl.view.tpl:update({ items = { "a", "b" }, n = 2 })"#) == nil)
        #expect(test.takeOutput() == renderText(["* a", "* b", "total 2"]))
        #expect(test.turn(#"ctl.view.tpl.data = { items = {}, n = 0 }"#) == nil)
        #expect(test.takeOutput() == renderText(["total 0"]))
        #expect(test.turn(#"ctl.view.tpl.source = "now {{n}}""#) == nil)
        #expect(test.takeOutput() == renderText(["now 0"]))
    }

    @Test func templateShowsTextAsIsNotHTMLEscaped() throws {
        let (test, _) = try shown(#"view.template{ source = "{{who}} | {{{who}}}", data = { who = "Tom & Jerry <3>" } }"#)
        do {
            #expect(test.render(width: 80) == "Tom & Jerry <3> | Tom & Jerry <3>")
        }
    }

    @Test func templateFileNextToTheScript() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crescent-view-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "Report for {{who}}\n{{#rows}}{{name}}: {{n}}\n{{/rows}}".write(
            to: folder.appendingPathComponent("report.mustache"), atomically: true, encoding: .utf8)
        let script = folder.appendingPathComponent("main.lua").path
        let test = try ViewTestHost()
        test.run("""
            local C = controller("C")
            function C:loadView()
              return view.template{ file = "report.mustache", data = { who = "Ann", rows = { { name = "a", n = 1 }, { name = "b", n = 2 } } } }
            end
            app.push(C)
            """, scriptPath: script)
        test.settle()
        #expect(test.stderr == "")
        #expect(test.takeOutput() == renderText(["Report for Ann", "a: 1", "b: 2"]))
    }

    @Test func templateFileThatDoesNotExistIsAnErrorAtTheCallSite() throws {
        let test = try ViewTestHost()
        test.run(#"print(select(2, pcall(view.template, { file = "missing.mustache" })))"#)
        #expect(test.stdout.hasPrefix("view.template: cannot open template file 'missing.mustache'"), "\(test.stdout)")
    }

    @Test func templateWithABadSourceSaysSo() throws {
        let test = try ViewTestHost()
        test.run(#"print(pcall(view.template, { source = "{{#open}} never closed" }))"#)
        do {
            #expect(test.stdout.hasPrefix("false\t"), "\(test.stdout)")
        }
    }
}
