/// Reverse incremental search through ``History`` (Ctrl-R), as in readline.
///
/// Each character typed extends the query and looks again from the current match backwards; Ctrl-R
/// looks for an older match (an earlier place in the same entry first); Backspace shortens the query
/// and looks again from the newest entry. When nothing matches, the search is *failing* and the last
/// match stays shown. Matching is by grapheme clusters and case-sensitive, over whole entries
/// (multi-line ones included). ``LineEditor`` turns accept and cancel into buffer changes.
///
/// ```swift
/// let history = History(["print(1)", "local x = 2", "print(x)"])
/// var search = HistorySearch()
/// search.append("pri", in: history)
/// search.match                        // Match(entry: 2, offset: 0): "print(x)"
/// search.findOlder(in: history)
/// search.match                        // Match(entry: 0, offset: 0): "print(1)"
/// search.prompt                       // "(reverse-i-search)`pri': "
/// ```
public struct HistorySearch: Hashable, Sendable {
    /// Where a query was found: an index into ``History/entries`` and the grapheme offset of the
    /// first matching character in that entry.
    public struct Match: Hashable, Sendable {
        public var entry: Int
        public var offset: Int

        public init(entry: Int, offset: Int) {
            self.entry = entry
            self.offset = offset
        }
    }

    /// What the user typed after Ctrl-R.
    public private(set) var query = ""
    /// The entry shown, or nil before anything matched.
    public private(set) var match: Match?
    /// Whether the query (or the last Ctrl-R) found nothing; the previous match stays shown.
    public private(set) var isFailing = false

    /// A search with an empty query.
    public init() {}

    /// The prompt shown in place of the normal one while searching, as readline words it.
    public var prompt: String {
        let shown = query.replacing("\n", with: "\\n")
        return isFailing ? "(failed reverse-i-search)`\(shown)': " : "(reverse-i-search)`\(shown)': "
    }

    /// Extends the query with `text` and looks for it from the current match backwards.
    public mutating func append(_ text: String, in history: History) {
        guard !text.isEmpty else { return }
        query += text
        let start = match.map { ($0.entry, $0.offset + 1) } ?? (history.entries.count - 1, nil)
        update(find(in: history, fromEntry: start.0, before: start.1))
    }

    /// Replaces the query (Ctrl-R on an empty query reuses the previous search's) and looks from
    /// the newest entry.
    public mutating func setQuery(_ text: String, in history: History) {
        query = text
        match = nil
        isFailing = false
        guard !query.isEmpty else { return }
        update(find(in: history, fromEntry: history.entries.count - 1, before: nil))
    }

    /// Removes the last character of the query and looks again from the newest entry.
    public mutating func deleteLast(in history: History) {
        guard !query.isEmpty else { return }
        setQuery(String(query.dropLast()), in: history)
    }

    /// Looks for the next older match (Ctrl-R again): earlier in the same entry, then in older ones.
    public mutating func findOlder(in history: History) {
        guard !query.isEmpty else { return }
        guard let current = match else {
            update(find(in: history, fromEntry: history.entries.count - 1, before: nil))
            return
        }
        update(find(in: history, fromEntry: current.entry, before: current.offset))
    }

    private mutating func update(_ found: Match?) {
        if let found {
            match = found
            isFailing = false
        } else {
            isFailing = true
        }
    }

    /// The newest occurrence of the query in entries `entry` and older, considering in `entry`
    /// only occurrences starting before `limit`.
    private func find(in history: History, fromEntry entry: Int, before limit: Int?) -> Match? {
        let needle = Array(query)
        guard !needle.isEmpty, entry >= 0 else { return nil }
        var index = min(entry, history.entries.count - 1)
        var limit = entry < history.entries.count ? limit : nil
        while index >= 0 {
            let haystack = Array(history.entries[index])
            var offset = min(limit.map { $0 - 1 } ?? haystack.count, haystack.count - needle.count)
            while offset >= 0 {
                if haystack[offset..<offset + needle.count].elementsEqual(needle) {
                    return Match(entry: index, offset: offset)
                }
                offset -= 1
            }
            index -= 1
            limit = nil
        }
        return nil
    }
}
