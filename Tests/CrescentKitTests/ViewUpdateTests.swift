@testable import CrescentKit
import Foundation
import Model
import Testing

/// Updating views (issue 4, "Views"): `update(data)` and field assignment, one render per loop
/// turn, never the same text twice in a row, `set` and `apply` on tables and lists, and errors
/// for bad input that name the component and the field.
@Suite struct ViewUpdateTests {
    private func shown(_ expression: String) throws -> ViewTestHost {
        let test = try ViewTestHost()
        test.show(expression)
        #expect(test.stderr == "", "\(test.stderr)")
        _ = test.takeOutput()
        return test
    }

    // MARK: update(data) and field assignment

    @Test(arguments: [
        ("text", #"view.text{ id = "%@", text = "before" }"#, #""after""#, "text"),
        ("list", #"view.list{ id = "%@", items = { "a" } }"#, #"{ "b", "c" }"#, "items"),
        ("table", #"view.table{ id = "%@", columns = { "k", "v" }, rows = { { k = "a", v = 1 } } }"#,
         #"{ { k = "b", v = 2 }, { k = "cc", v = 30 } }"#, "rows"),
        ("keyvalue", #"view.keyvalue{ id = "%@", pairs = { a = 1 } }"#, #"{ b = "two", c = 3 }"#, "pairs"),
        ("ordered keyvalue", #"view.keyvalue{ id = "%@", pairs = { a = 1 } }"#, #"{ { "z", 1 }, { "y", 2 } }"#, "pairs"),
        ("progress", #"view.progress{ id = "%@", value = 1, total = 4 }"#, "3", "value"),
        ("template", #"view.template{ id = "%@", source = "n={{n}}", data = { n = 1 } }"#, "{ n = 2 }", "data"),
    ])
    func updateAndAssignmentShowTheSame(kind: String, constructor: String, data: String, field: String) throws {
        let make = { (id: String) in constructor.replacingOccurrences(of: "%@", with: id) }
        let test = try shown("view.stack{ \(make("a")), \(make("b")) }")
        let before = try #require(test.node("a")).lines(width: 60)
        #expect(test.turn("ctl.view.a:update(\(data))") == nil)
        #expect(test.turn("ctl.view.b.\(field) = \(data)") == nil)
        let updated = try #require(test.node("a")).lines(width: 60)
        let assigned = try #require(test.node("b")).lines(width: 60)
        #expect(updated == assigned, "\(kind)")
        #expect(updated != before, "\(kind): the update shows")
    }

    @Test func updateWithATableOfFieldsSetsEach() throws {
        let test = try shown(#"view.stack{ view.progress{ id = "p", value = 1, total = 4 }, view.list{ id = "l", items = { "a" } } }"#)
        #expect(test.turn(#"ctl.view.p:update({ value = 2, total = 8, label = "copying" }) ctl.view.l:update({ items = { "x" }, marker = ">" })"#) == nil)
        let out = test.takeOutput()
        #expect(test.render(width: 80) == "[##########------------------------------] 25% copying\n> x")
        if test.presenterWidth >= 60 { #expect(out == renderText(["[##########------------------------------] 25% copying", "> x"])) }
        #expect(test.turn(#"print(ctl.view.p.value, ctl.view.p.total, ctl.view.p.label, ctl.view.l.marker, ctl.view.l.kind, ctl.view.l.id)"#) == nil)
        #expect(test.takeOutput() == "2\t8\tcopying\t>\tlist\tl\n")
    }

    @Test func fieldsReadBackAsAssigned() throws {
        let test = try shown(#"view.text{ id = "t", text = "hi" }"#)
        #expect(test.turn(#"local t = ctl.view.t print(t.text, t.kind, t.id, t.style, tostring(t)) t.text = "bye" print(t.text)"#) == nil)
        #expect(test.takeOutput() == "hi\ttext\tt\tnil\t<view.text #t>\nbye\nbye\n\n", "the prints, then the render")
    }

    @Test func assigningNilClearsAField() throws {
        let test = try shown(#"view.stack{ view.text("top"), view.progress{ id = "p", value = 1, total = 2, label = "half" } }"#)
        #expect(test.turn("ctl.view.p.label = nil") == nil)
        do {
            #expect(test.render(width: 60) == "top\n[####################--------------------] 50%")
            #expect(test.node("p")?.fields["label"] == nil)
        }
    }

    @Test func findReachesNestedComponents() throws {
        let test = try shown(#"view.stack{ view.row{ view.text{ id = "deep", text = "x" } } }"#)
        #expect(test.turn(#"print(ctl.view.deep.text, ctl.view.root:find("deep").text, ctl.view.root:find("nope"))"#) == nil)
        #expect(test.takeOutput() == "x\tx\tnil\n")
        // find asks; a field names a component the view must have, so a missing id is named.
        #expect(test.turn("print(ctl.view.nope)")?.contains("no component with id 'nope' in C's view (ids: deep)") == true)
    }

    // MARK: One render per loop turn, never the same text twice

    @Test func severalUpdatesInOneTurnRenderOnce() throws {
        let test = try shown(#"view.stack{ view.text{ id = "t", text = "0" }, view.list{ id = "l", items = { "a" } } }"#)
        let before = test.renderCount
        #expect(test.turn("""
            for i = 1, 50 do ctl.view.t.text = tostring(i) end
            ctl.view.l:update({ "x", "y" })
            ctl.view.t:update("final")
            """) == nil)
        #expect(test.renderCount == before + 1)
        #expect(test.takeOutput() == renderText(["final", "- x", "- y"]))
    }

    @Test func updatesFromTimersRenderOncePerTurn() throws {
        let test = try ViewTestHost()
        test.run("""
            local C = controller("C")
            function C:loadView() return view.text{ id = "t", text = "start" } end
            function C:viewDidAppear()
              self:after(1, function() self.view.t.text = "one" self.view.t.text = "two" end)
              self:after(2, function() self.view.t.text = "three" end)
            end
            app.push(C)
            """)
        test.settle()
        #expect(test.takeOutput() == renderText(["start"]))
        test.advance(seconds: 1)
        #expect(test.takeOutput() == renderText(["two"]))
        test.advance(seconds: 1)
        #expect(test.takeOutput() == renderText(["three"]))
        #expect(test.renderCount == 3)
    }

    @Test func theSameTextIsNeverPrintedTwiceInARow() throws {
        let test = try shown(#"view.stack{ view.text{ id = "t", text = "same" }, view.table{ id = "tb", columns = { "a" }, rows = { { a = 1 } } } }"#)
        let before = test.renderCount
        #expect(test.turn(#"ctl.view.t.text = "same""#) == nil)
        #expect(test.turn(#"ctl.view.t:update("same") ctl.view.tb:set(1, "a", 1)"#) == nil)
        #expect(test.turn(#"ctl.view.t.text = "other" ctl.view.t.text = "same""#) == nil)
        #expect(test.turn(#"ctl.view.tb.rows = { { a = 1 } }"#) == nil)
        #expect(test.takeOutput() == "")
        #expect(test.renderCount == before)
        #expect(test.turn(#"ctl.view.t.text = "changed""#) == nil)
        #expect(test.takeOutput() == renderText(["changed", "a", "─", "1"]))
        #expect(test.turn(#"ctl.view.t.text = "same""#) == nil)
        #expect(test.takeOutput() == renderText(["same", "a", "─", "1"]), "going back to an earlier text prints it again")
    }

    @Test func onlyTheTopControllersViewIsShown() throws {
        let test = try ViewTestHost()
        test.run("""
            local A = controller("A")
            function A:loadView() return view.text{ id = "t", text = "A" } end
            local B = controller("B")
            function B:loadView() return view.text("B") end
            a = app.push(A)
            app.push(B)
            """)
        test.settle()
        #expect(test.takeOutput() == renderText(["B"]), "one render for the turn, of the top controller")
        #expect(test.turn(#"a.view.t.text = "A changed""#) == nil)
        #expect(test.takeOutput() == "", "a controller below the top is not shown")
        #expect(test.turn("app.pop()") == nil)
        test.settle()
        #expect(test.takeOutput() == renderText(["A changed"]))
    }

    // MARK: table set(row, key, value)

    private static let scores = """
        view.stack{
          view.table{ id = "t", columns = { "name", "score", "note" }, rows = {
            { name = "ann", score = 10, note = "ok" }, { name = "bob", score = 200, note = "fine" }, { name = "cy", score = 3, note = "-" } } },
          view.table{ id = "ref", columns = { "name", "score", "note" }, rows = {} },
        }
        """

    /// Sets `changes` on table `t` one turn each, then gives `ref` the same rows from scratch and
    /// returns both renders at `widths`.
    private func afterSets(_ sets: [String], widths: [Int] = [80, 14]) throws -> [(incremental: [String], scratch: [String])] {
        let test = try shown(Self.scores)
        for set in sets {
            #expect(test.turn("ctl.view.t:set(\(set))") == nil)
        }
        #expect(test.turn("ctl.view.ref.rows = ctl.view.t.rows") == nil)
        let table = try #require(test.node("t")), reference = try #require(test.node("ref"))
        return widths.map { (table.lines(width: $0), reference.lines(width: $0)) }
    }

    @Test func setChangesOneCellInPlace() throws {
        let test = try shown(Self.scores)
        #expect(test.turn(#"ctl.view.t:set(2, "note", "good")"#) == nil)
        #expect(test.takeOutput() == renderText([
            "name  score  note",
            "────  ─────  ────",
            "ann      10  ok",
            "bob     200  good",
            "cy        3  -",
            "name  score  note",
            "────  ─────  ────",
        ]))
        #expect(test.turn(#"print(ctl.view.t.rows[2].note)"#) == nil)
        #expect(test.takeOutput() == "good\n", "the rows read back with the change")
    }

    @Test func setThatWidensAColumnRelaysOutEveryRow() throws {
        for (incremental, scratch) in try afterSets([#"1, "name", "annabelle""#, #"3, "score", 12345"#]) {
            #expect(incremental == scratch)
        }
        let test = try shown(Self.scores)
        #expect(test.turn(#"ctl.view.t:set(1, "name", "annabelle")"#) == nil)
        #expect(test.render(width: 80).hasPrefix("""
            name       score  note
            ─────────  ─────  ────
            annabelle     10  ok
            bob          200  fine
            cy             3  -
            """))
    }

    @Test func setOfCJKAndEmojiKeepsColumnsAligned() throws {
        for (incremental, scratch) in try afterSets([#"2, "name", "日本語""#, #"3, "name", "👍🏽""#, #"1, "note", "東京""#]) {
            #expect(incremental == scratch)
        }
    }

    @Test func setThatNarrowsTheWidestCellShrinksTheColumn() throws {
        let results = try afterSets([#"1, "note", "a much longer note""#, #"1, "note", "ok""#], widths: [80])
        do {
            for (incremental, scratch) in results { #expect(incremental == scratch) }
        }
    }

    @Test func setOfTextInANumericColumnRealigns() throws {
        let results = try afterSets([#"1, "score", "n/a""#], widths: [80])
        do {
            for (incremental, scratch) in results { #expect(incremental == scratch) }
        }
    }

    @Test func replacingNumbersWithTextRealigns() throws {
        let test = try shown(#"view.table{ id = "t", columns = { "v" }, rows = { { v = 1 }, { v = 100 } } }"#)
        #expect(test.render(width: 80) == "  v\n───\n  1\n100")
        #expect(test.turn(#"ctl.view.t.rows = { { v = "a" }, { v = "bcd" } }"#) == nil)
        do {
            #expect(test.render(width: 80) == "v\n───\na\nbcd")
        }
    }

    @Test func setErrorsNameTheTableAndTheProblem() throws {
        let test = try shown(#"view.stack{ view.table{ id = "t", columns = { "a" }, rows = { { a = 1 } } }, view.list{ id = "l", items = { "x" } } }"#)
        #expect(test.turn(#"print(select(2, pcall(ctl.view.t.set, ctl.view.t, 5, "a", 1)))"#) == nil)
        #expect(test.turn(#"print(select(2, pcall(ctl.view.t.set, ctl.view.t, 1, "zz", 1)))"#) == nil)
        #expect(test.turn(#"print(select(2, pcall(ctl.view.l.set, ctl.view.l, 1, "a", 1)))"#) == nil)
        #expect(test.takeOutput() == """
            view.table.set: row 5 does not exist (rows: 1)
            view.table.set: no column 'zz' (columns: a)
            view.list:set(row, key, value) is for tables; assign fields instead

            """)
    }

    // MARK: apply(changeSet, items) against rendering from scratch

    /// A table and a list updated with `apply`, and the same again set from scratch.
    private static let applied = """
        view.stack{
          view.table{ id = "t", columns = { "name", { key = "qty", title = "Qty" }, "note" }, rows = %ROWS% },
          view.list{ id = "l", items = %NAMES%, marker = "*" },
          view.table{ id = "rt", columns = { "name", { key = "qty", title = "Qty" }, "note" }, rows = {} },
          view.list{ id = "rl", items = {}, marker = "*" },
        }
        """

    struct Item: Equatable {
        var name: String
        var qty: Int
        var note: String
        var lua: String { "{ name = \(luaLiteral(name)), qty = \(qty), note = \(luaLiteral(note)) }" }
    }

    static let words = ["apple", "kiwi", "日本", "fig", "👍🏽 ok", "banana split", "x", "Zürich", "长长长长长的名字", ""]

    static func randomItem(_ rng: inout ViewTestRandom) -> Item {
        Item(name: words[rng.next(words.count)], qty: rng.next(3) == 0 ? rng.next(100_000) : rng.next(20),
             note: words[rng.next(words.count)])
    }

    /// One random change: deletions (old positions), insertions and updates (new positions), as
    /// ChangeSet defines them.
    static func randomChange(_ old: [Item], _ rng: inout ViewTestRandom) -> (new: [Item], inserted: [Int], deleted: [Int], updated: [Int]) {
        var deleted: [Int] = []
        var survivors: [Item] = []
        for (index, item) in old.enumerated() {
            if rng.next(4) == 0 { deleted.append(index + 1) } else { survivors.append(item) }
        }
        var new = survivors.map { Optional($0) }
        let insertCount = rng.next(4)
        for _ in 0..<insertCount { new.insert(nil, at: rng.next(new.count + 1)) }
        var inserted: [Int] = []
        var updated: [Int] = []
        var items: [Item] = []
        for (index, slot) in new.enumerated() {
            if let item = slot {
                if rng.next(5) == 0 {
                    updated.append(index + 1)
                    items.append(randomItem(&rng))
                } else {
                    items.append(item)
                }
            } else {
                inserted.append(index + 1)
                items.append(randomItem(&rng))
            }
        }
        // Deletions are listed in any order; the view sorts them.
        if rng.next(2) == 0 { deleted.reverse() }
        return (items, inserted, deleted, updated)
    }

    @Test(arguments: 1...60)
    func applyMatchesRenderingTheFinalRowsFromScratch(seed: Int) throws {
        var rng = ViewTestRandom(seed: UInt64(seed))
        // A numeric column whose alignment is settled by a non-empty first load (see
        // applyToAnEmptyTableAlignsNumbers for the empty case).
        var items = (0..<(1 + rng.next(8))).map { _ in Self.randomItem(&rng) }
        let rows = "{ " + items.map(\.lua).joined(separator: ", ") + " }"
        let names = "{ " + items.map { luaLiteral($0.name) }.joined(separator: ", ") + " }"
        let test = try shown(Self.applied.replacingOccurrences(of: "%ROWS%", with: rows).replacingOccurrences(of: "%NAMES%", with: names))
        for step in 0..<6 {
            let change = Self.randomChange(items, &rng)
            items = change.new
            let positions = { (numbers: [Int]) in "{ " + numbers.map(String.init).joined(separator: ", ") + " }" }
            let changes = "{ inserted = \(positions(change.inserted)), deleted = \(positions(change.deleted)), updated = \(positions(change.updated)) }"
            let error = test.turn("""
                local rows = { \(items.map(\.lua).joined(separator: ", ")) }
                local names = {}
                for i, row in ipairs(rows) do names[i] = row.name end
                local changes = \(changes)
                ctl.view.t:apply(changes, rows)
                ctl.view.l:apply(changes, names)
                ctl.view.rt.rows = rows
                ctl.view.rl.items = names
                """)
            #expect(error == nil, "seed \(seed) step \(step): \(error ?? "")")
            let table = try #require(test.node("t")), tableRef = try #require(test.node("rt"))
            let list = try #require(test.node("l")), listRef = try #require(test.node("rl"))
            for width in [80, 24, 12] {
                #expect(table.lines(width: width) == tableRef.lines(width: width), "seed \(seed) step \(step) width \(width): \(changes)")
                #expect(list.lines(width: width) == listRef.lines(width: width), "seed \(seed) step \(step) width \(width): \(changes)")
            }
            #expect(table.cells.count == items.count)
        }
        #expect(test.stderr == "")
    }

    @Test func applyRendersOnceAndPrintsTheNewText() throws {
        let test = try shown(#"view.table{ id = "t", columns = { "n", "q" }, rows = { { n = "a", q = 1 }, { n = "b", q = 2 }, { n = "c", q = 3 } } }"#)
        let before = test.renderCount
        #expect(test.turn(#"ctl.view.t:apply({ deleted = { 2 }, inserted = { 1 }, updated = { 3 } }, { { n = "new", q = 10 }, { n = "a", q = 1 }, { n = "C", q = 30 } })"#) == nil)
        #expect(test.renderCount == before + 1)
        #expect(test.takeOutput() == renderText(["n     q", "───  ──", "new  10", "a     1", "C    30"]))
    }

    @Test func applyWithReloadReadsEverything() throws {
        let test = try shown(#"view.list{ id = "l", items = { "a", "b" } }"#)
        #expect(test.turn(#"ctl.view.l:apply({ reload = true }, { "x", "y", "z" })"#) == nil)
        #expect(test.takeOutput() == renderText(["- x", "- y", "- z"]))
    }

    @Test func applyToAnEmptyTableAlignsNumbers() throws {
        let test = try shown(#"view.stack{ view.table{ id = "t", columns = { "n", "q" }, rows = {} }, view.table{ id = "ref", columns = { "n", "q" }, rows = {} } }"#)
        #expect(test.turn("""
            local rows = { { n = "a", q = 1 }, { n = "b", q = 22 } }
            ctl.view.t:apply({ inserted = { 1, 2 } }, rows)
            ctl.view.ref.rows = rows
            """) == nil)
        let table = try #require(test.node("t")), reference = try #require(test.node("ref"))
        do {
            #expect(table.lines(width: 80) == reference.lines(width: 80))
        }
    }

    @Test func applyToATableWithArrayRows() throws {
        let test = try shown(#"view.stack{ view.table{ id = "t", columns = { "n", "q" }, rows = { { "a", "x" } } }, view.table{ id = "ref", columns = { "n", "q" }, rows = {} } }"#)
        #expect(test.turn("""
            local rows = { { "a", "x" }, { "b", "y" } }
            ctl.view.t:apply({ inserted = { 2 } }, rows)
            ctl.view.ref.rows = rows
            """) == nil)
        let table = try #require(test.node("t")), reference = try #require(test.node("ref"))
        do {
            #expect(table.lines(width: 80) == reference.lines(width: 80))
        }
    }

    @Test func applyIsOnlyForTablesAndLists() throws {
        let test = try shown(#"view.stack{ view.text{ id = "t", text = "x" }, view.list{ id = "l", items = { "a" } } }"#)
        #expect(test.turn(#"print(select(2, pcall(ctl.view.t.apply, ctl.view.t, {}, {})))"#) == nil)
        #expect(test.turn(#"print(select(2, pcall(ctl.view.l.apply, ctl.view.l, {}, "nope")))"#) == nil)
        #expect(test.takeOutput() == """
            view.text:apply(change[, items]) is for tables and lists
            view.list:apply: items must be the list after the change, got string

            """)
    }

    // MARK: Bad input

    /// Runs `code` (which must raise) in the main chunk and returns the message.
    private func raised(_ code: String) throws -> String {
        let test = try ViewTestHost()
        test.run("local ok, err = pcall(function()\n\(code)\nend)\nprint(ok, err)")
        return test.stdout.trimmingCharacters(in: .newlines)
    }

    @Test(arguments: [
        (#"view.text{ bogus = 1 }"#, "false\ttest.lua:2: view.text: no field 'bogus' (fields: id, text, style)"),
        (#"view.text{ text = "x" }.colour = 1"#, "false\ttest.lua:2: view.text: no field 'colour' (fields: text, style)"),
        (#"view.table{ columns = { "a" } }:update({ row = {} })"#, "false\ttest.lua:2: view.table: no field 'row' (fields: columns, rows, header, selectable; did you mean 'rows'?)"),
        (#"view.progress(1).id = "p""#, "false\ttest.lua:2: view.progress: no field 'id' (fields: value, total, label)"),
        (#"view.slot{ id = "s", text = "x" }"#, "false\ttest.lua:2: view.slot: no field 'text' (fields: id)"),
        (#"view.stack{ view.text("a"), 3 }"#, "false\ttest.lua:2: view.stack: item 2 must be a view component (view.text, ...), got number"),
        (#"view.text{ view.text("a") }"#, "false\ttest.lua:2: view.text: only view.stack and view.row hold other components"),
        (#"local t = view.text("a") view.stack{ t } view.row{ t }"#, "false\ttest.lua:2: view.row: a component can be placed only once"),
        (#"view.text("a").text = print"#, "false\ttest.lua:2: view.text.text: cannot show a function"),
    ])
    func badInputNamesTheComponentAndTheField(code: String, message: String) throws {
        #expect(try raised(code) == message)
    }

    @Test func updateWithTheWrongKindOfDataNamesTheComponent() throws {
        let message = try raised(#"view.table{ columns = { "a" } }:update("text")"#)
        #expect(message.hasPrefix("false\ttest.lua:2: "), "\(message)")
        #expect(message.contains("table") && message.contains("update") && message.contains("string"), "\(message)")
    }

    @Test(arguments: [
        (#"view.table{ columns = { "a" }, rows = "nope" }"#, "view.table", "rows"),
        (#"view.table{ columns = 5 }"#, "view.table", "columns"),
        (#"view.table{ columns = { "a" }, header = "yes" }"#, "view.table", "header"),
        (#"view.list{ items = 3 }"#, "view.list", "items"),
        (#"view.list{ items = { "a" }, marker = {} }"#, "view.list", "marker"),
        (#"view.progress{ value = "half" }"#, "view.progress", "value"),
        (#"view.progress{ value = 1, total = "ten" }"#, "view.progress", "total"),
        (#"view.keyvalue{ pairs = 5 }"#, "view.keyvalue", "pairs"),
        (#"view.stack{ gap = "wide" }"#, "view.stack", "gap"),
        (#"view.template{ source = 5 }"#, "view.template", "source"),
        (#"view.text("x").text = {}"#, "view.text", "text"),
    ])
    func wrongTypesAreErrorsThatNameTheComponentAndTheField(code: String, component: String, field: String) throws {
        let message = try raised(code)
        do {
            #expect(message.hasPrefix("false\ttest.lua:2: \(component)") && message.contains(field), "\(message)")
        }
    }
}

/// A Lua string literal for `text` (UTF-8 passes through as is).
func luaLiteral(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        .replacingOccurrences(of: "\n", with: "\\n") + "\""
}

/// A small deterministic random number generator (SplitMix64), so failures replay by seed.
struct ViewTestRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A number in 0..<bound (0 when bound is 0).
    mutating func next(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(next() % UInt64(bound)) }
}
