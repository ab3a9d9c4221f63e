import LineEditing
import Testing

@Suite struct HistorySearchTests {
    let history = History(["print(1)", "local x = 2", "print(x)", "for i = 1, 3 do\n  print(i)\nend"])

    @Test func eachCharacterNarrowsTheSearch() {
        var search = HistorySearch()
        search.append("p", in: history)
        #expect(search.match == .init(entry: 3, offset: 18), "the newest entry, its last occurrence")
        search.append("rint(x", in: history)
        #expect(search.match == .init(entry: 2, offset: 0))
        #expect(search.prompt == "(reverse-i-search)`print(x': ")
        #expect(!search.isFailing)
    }

    @Test func findOlderGoesBackThroughEntriesAndWithinOne() {
        var search = HistorySearch()
        search.append("i", in: history)
        #expect(search.match == .init(entry: 3, offset: 24), "print(i): the argument")
        search.findOlder(in: history)
        #expect(search.match == .init(entry: 3, offset: 20), "the i of print")
        search.findOlder(in: history)
        #expect(search.match == .init(entry: 3, offset: 4), "for i")
        search.findOlder(in: history)
        #expect(search.match == .init(entry: 2, offset: 2))
        search.findOlder(in: history)
        #expect(search.match == .init(entry: 0, offset: 2), "local x = 2 has no i")
        search.findOlder(in: history)
        #expect(search.isFailing, "nothing older")
        #expect(search.match == .init(entry: 0, offset: 2), "the last match stays")
        #expect(search.prompt == "(failed reverse-i-search)`i': ")
    }

    @Test func aQueryWithNoMatchFails() {
        var search = HistorySearch()
        search.append("pr", in: history)
        let found = search.match
        search.append("z", in: history)
        #expect(search.isFailing)
        #expect(search.match == found)
        search.deleteLast(in: history)
        #expect(!search.isFailing)
        #expect(search.match == found)
        #expect(search.query == "pr")
    }

    @Test func backspaceSearchesAgainFromTheNewest() {
        var search = HistorySearch()
        search.append("local", in: history)
        #expect(search.match?.entry == 1)
        search.deleteLast(in: history)
        search.deleteLast(in: history)
        search.deleteLast(in: history)
        #expect(search.query == "lo")
        #expect(search.match?.entry == 1)
        search.deleteLast(in: history)
        search.deleteLast(in: history)
        #expect(search.query.isEmpty)
        #expect(search.match == nil)
    }

    @Test func matchingIsByGraphemeAndCaseSensitive() {
        let history = History(["x = 'café'", "print('Cafe')", "s = '👩‍👩‍👧 family'"])
        var search = HistorySearch()
        search.append("cafe\u{301}", in: history)
        #expect(search.match == .init(entry: 0, offset: 5), "canonically equivalent é")
        search.setQuery("Cafe", in: history)
        #expect(search.match == .init(entry: 1, offset: 7))
        search.setQuery("👩", in: history)
        #expect(search.isFailing, "a piece of a ZWJ sequence is not a character of the entry")
        search.setQuery("👩‍👩‍👧 f", in: history)
        #expect(search.match == .init(entry: 2, offset: 5))
    }

    @Test func emptyHistoryFindsNothing() {
        var search = HistorySearch()
        search.append("x", in: History())
        #expect(search.isFailing)
        #expect(search.match == nil)
        search.findOlder(in: History())
        #expect(search.match == nil)
    }
}
