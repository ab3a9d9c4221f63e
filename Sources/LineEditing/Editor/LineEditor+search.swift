/// Ctrl-R: reverse incremental search, as readline's `reverse-search-history`.
///
/// While searching, typed text extends the query, Backspace shortens it, Ctrl-R finds an older
/// match (on an empty query it reuses the previous search's), Ctrl-G gives back the line as it was,
/// Esc keeps the match for editing, Enter runs it, and any other key keeps the match and then acts
/// as usual (so Ctrl-E or Right starts editing it; Ctrl-C clears the line).
extension LineEditor {
    /// Begins a search from the newest entry.
    mutating func startSearch() -> Action {
        searchOrigin = buffer
        search = HistorySearch()
        return .edit
    }

    /// Handles a key during a search; nil when the search ended and the key should act as usual.
    mutating func handleSearch(_ key: Key) -> Action? {
        guard let current = search else { return nil }
        switch key {
        case .text(let text), .paste(let text):
            search?.append(text, in: history)
            return .edit
        case .key(.backspace, modifiers: []):
            search?.deleteLast(in: history)
            return .edit
        case .control("r"):
            if current.query.isEmpty {
                search?.setQuery(lastSearchQuery, in: history)
            } else {
                search?.findOlder(in: history)
            }
            return .edit
        case .control("g"):
            cancelSearch()
            return .edit
        case .control("c"):
            cancelSearch()
            return nil
        case .key(.escape, _):
            acceptSearch(current)
            return .edit
        default:
            acceptSearch(current)
            return nil
        }
    }

    /// Ends the search, putting the match in the buffer with the cursor where it matched.
    private mutating func acceptSearch(_ finished: HistorySearch) {
        if !finished.query.isEmpty { lastSearchQuery = finished.query }
        self.search = nil
        guard let match = finished.match, history.entries.indices.contains(match.entry) else {
            buffer = searchOrigin
            return
        }
        history.browse(to: match.entry, draft: searchOrigin.text)
        buffer = searchOrigin
        buffer.setText(history.entries[match.entry], cursor: match.offset)
    }

    /// Ends the search, giving back the line as it was.
    private mutating func cancelSearch() {
        if let query = search?.query, !query.isEmpty { lastSearchQuery = query }
        search = nil
        buffer = searchOrigin
    }
}
