import LineEditing
import Testing

@Suite struct HistoryTests {
    @Test func addSkipsBlankAndRepeatedEntries() {
        var history = History()
        #expect(history.add("print(1)") as Bool)
        #expect(!(history.add("print(1)") as Bool))
        #expect(!(history.add("   ") as Bool))
        #expect(!(history.add("") as Bool))
        #expect(history.add("x = 1") as Bool)
        #expect(history.add("print(1)") as Bool, "only consecutive repeats are skipped")
        #expect(history.entries == ["print(1)", "x = 1", "print(1)"])
    }

    @Test func multiLineEntriesStayWhole() {
        var history = History()
        history.add("for i = 1, 3 do\n  print(i)\nend")
        #expect(history.entries == ["for i = 1, 3 do\n  print(i)\nend"])
        #expect((history.previous(current: "") as String?) == "for i = 1, 3 do\n  print(i)\nend")
    }

    @Test func capacityDropsTheOldest() {
        var history = History()
        for index in 0..<1_005 { history.add("entry \(index)") }
        #expect(history.entries.count == 1_000)
        #expect(History.defaultCapacity == 1_000)
        #expect(history.entries.first == "entry 5")
        #expect(history.entries.last == "entry 1004")
        let loaded = History((0..<50_000).map { "line \($0 / 2)" })
        #expect(loaded.entries.count == 1_000, "repeats folded, then capped")
        #expect(loaded.entries.last == "line 24999")
        let small = History(["a", "b", "b", "c"], capacity: 2)
        #expect(small.entries == ["b", "c"])
    }

    @Test func browsingKeepsTheDraft() {
        var history = History(["one", "two"])
        #expect((history.next(current: "dra") as String?) == nil, "nothing newer than the draft")
        #expect((history.previous(current: "dra") as String?) == "two")
        #expect(history.isBrowsing)
        #expect((history.previous(current: "two") as String?) == "one")
        #expect((history.previous(current: "one") as String?) == nil, "the oldest")
        #expect((history.next(current: "one") as String?) == "two")
        #expect((history.next(current: "two") as String?) == "dra")
        #expect(!history.isBrowsing)
        #expect((history.next(current: "dra") as String?) == nil)
    }

    @Test func editsWhileBrowsingAreKeptUntilTheBrowseEnds() {
        var history = History(["one", "two"])
        _ = history.previous(current: "")
        #expect((history.previous(current: "two!") as String?) == "one")
        #expect((history.next(current: "one") as String?) == "two!")
        #expect((history.next(current: "two!") as String?) == "")
        #expect((history.previous(current: "") as String?) == "two!")
        history.endBrowsing()
        #expect((history.previous(current: "") as String?) == "two", "entries themselves never change")
        #expect(history.entries == ["one", "two"])
    }

    @Test func addEndsTheBrowse() {
        var history = History(["one"])
        _ = history.previous(current: "draft")
        history.add("new")
        #expect(!history.isBrowsing)
        #expect((history.previous(current: "") as String?) == "new")
    }

    @Test func browseToAnEntry() {
        var history = History(["a", "b", "c"])
        history.browse(to: 0, draft: "typed")
        #expect(history.position == 0)
        #expect((history.next(current: "a") as String?) == "b")
        #expect((history.next(current: "b") as String?) == "c")
        #expect((history.next(current: "c") as String?) == "typed")
        history.browse(to: 7, draft: "")
        #expect(!history.isBrowsing)
    }
}
