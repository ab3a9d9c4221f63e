@testable import CrescentKit
import Testing

/// A view's first lines without laying out the rest (what `live` mode asks for, a screenful):
/// the same lines as the whole layout cut short, counted without being laid out, for every kind
/// of component and nesting; and a long table lays out only the rows asked for.
@Suite struct ViewLineLimitTests {
    static let views = [
        #"view.table{ columns = { "id", "name" }, rows = { { id = 1, name = "ann" }, { id = 2, name = "bo" }, { id = 3, name = "cy" } } }"#,
        #"view.table{ header = false, columns = { "id" }, rows = { { id = 1 }, { id = 22 } } }"#,
        #"view.table{ rows = {} }"#,
        #"view.stack{ gap = 2, view.text("a\n\nb"), view.slot{ id = "empty" }, view.table{ columns = { "n" }, rows = { { n = 1 }, { n = 2 } } }, view.list{ items = { "x" } } }"#,
        #"view.stack{ gap = 1, view.stack{ view.text("inner") }, view.row{ view.list{ items = { "1", "2", "3" } }, view.text("r") } }"#,
        #"view.row{ view.table{ columns = { "k" }, rows = { { k = "a" }, { k = "b" }, { k = "c" } } }, view.stack{ gap = 1, view.text("p"), view.text("q") } }"#,
        #"view.keyvalue{ pairs = { b = 2, a = 1 } }"#,
    ]

    @Test(arguments: views)
    func theFirstLinesAreTheWholeLayoutCutShort(_ expression: String) throws {
        let test = try ViewTestHost()
        test.show(expression)
        #expect(test.stderr == "", "\(test.stderr)")
        let root = try #require(test.root)
        for width in [12, 40] {
            let whole = root.lines(width: width)
            #expect(root.lineCount(width: width) == whole.count, "counted at \(width): \(whole)")
            for limit in 0...(whole.count + 2) {
                #expect(root.lines(width: width, limit: limit) == Array(whole.prefix(limit)), "\(limit) of \(whole) at \(width)")
            }
            // Laid out afresh with a limit first, the tree still gives every line when asked.
            for limit in [1, whole.count / 2, whole.count] {
                root.markDirty()
                #expect(root.lines(width: width, limit: limit) == Array(whole.prefix(limit)))
                #expect(root.lines(width: width) == whole, "the whole layout after one cut at \(limit)")
            }
        }
    }

    @Test func aLongTableLaysOutOnlyTheRowsAskedFor() throws {
        // In json mode the presenter lays out no lines of its own: every row laid out is asked for here.
        let test = try ViewTestHost(ui: .json)
        test.show(#"view.stack{ view.text("title"), view.table{ id = "t", columns = { "id", "name" }, rows = rows } }"#,
                  setup: #"rows = {} for i = 1, 1000 do rows[i] = { id = i, name = "item " .. i } end"#)
        let root = try #require(test.root)
        let table = try #require(test.node("t"))
        root.markDirty()
        let screen = root.lines(width: 40, limit: 23)
        #expect(screen.count == 23)
        #expect(screen[0] == "title" && screen[3] == "   1  item 1" && screen[22] == "  20  item 20", "\(screen)")
        #expect(root.lineCount(width: 40) == 1003)
        #expect(table.rowLines.prefix(20).allSatisfy { $0 != nil }, "the rows shown are laid out")
        #expect(table.rowLines.dropFirst(20).allSatisfy { $0 == nil }, "the 980 rows below the screen are not")

        #expect(test.turn(#"ctl.view.t:apply({ inserted = { 1 }, deleted = {}, updated = {}, reload = false, insertedItems = { { id = 0, name = "new" } } })"#) == nil)
        let after = root.lines(width: 40, limit: 23)
        #expect(after[3] == "   0  new" && after[4] == "   1  item 1" && after[22] == "  19  item 19", "\(after)")
        #expect(table.rowLines.dropFirst(21).allSatisfy { $0 == nil }, "an insert lays out no row below the screen")
        #expect(after == Array(root.lines(width: 40).prefix(23)), "the same lines as the whole layout")
        #expect(root.lineCount(width: 40) == 1004)
    }
}
