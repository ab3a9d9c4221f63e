/// Kill, yank and transpose: the commands that go through the kill ring or swap characters.
///
/// Kills right after kills merge into one kill-ring entry (forward kills append, backward kills
/// prepend), and Alt-Y right after Ctrl-Y (or another Alt-Y) replaces the yanked text with the
/// next older entry, as in readline.
///
/// ```swift
/// var line = LineBuffer("one two three")
/// line.killWordBackward()     // Ctrl-W: "three"
/// line.killWordBackward()     // Ctrl-W: "two " merges in front: the entry is "two three"
/// line.yank()                 // Ctrl-Y: "one two three"
/// ```
extension LineBuffer {
    /// Kills from the cursor to the end of its line (Ctrl-K); at the end of a line that is not
    /// the last, kills the newline, joining the next line.
    @discardableResult
    public mutating func killToLineEnd() -> Bool {
        let end = lineEnd(of: cursor)
        let range = end > cursor ? cursor..<end : cursor..<min(cursor + 1, characters.count)
        return kill(range, merging: .append)
    }

    /// Kills from the start of the cursor's line to the cursor (Ctrl-U); at the start of a line
    /// that is not the first, kills the newline before it.
    @discardableResult
    public mutating func killToLineStart() -> Bool {
        let start = lineStart(of: cursor)
        let range = start < cursor ? start..<cursor : max(cursor - 1, 0)..<cursor
        return kill(range, merging: .prepend)
    }

    /// Kills the whitespace-delimited word before the cursor (Ctrl-W), like readline's
    /// `unix-word-rubout`: `foo.bar(x` loses `foo.bar(x` entirely.
    @discardableResult
    public mutating func killWordBackward() -> Bool {
        kill(bigWordStart(before: cursor)..<cursor, merging: .prepend)
    }

    /// Kills back to the start of the previous alphanumeric word (Alt-Backspace): `foo.bar`
    /// loses only `bar`.
    @discardableResult
    public mutating func killAlphanumericWordBackward() -> Bool {
        kill(wordStart(before: cursor)..<cursor, merging: .prepend)
    }

    /// Kills forward to the end of the next alphanumeric word (Alt-D).
    @discardableResult
    public mutating func killWordForward() -> Bool {
        kill(cursor..<wordEnd(after: cursor), merging: .append)
    }

    /// Inserts the current kill-ring entry at the cursor (Ctrl-Y).
    @discardableResult
    public mutating func yank() -> Bool {
        killRing.resetRotation()
        guard let text = killRing.current else {
            lastEdit = .other
            return false
        }
        lastEdit = .yank(replace(cursor..<cursor, with: text))
        return true
    }

    /// Right after a yank, replaces the yanked text with the next older kill-ring entry (Alt-Y).
    /// Does nothing otherwise.
    @discardableResult
    public mutating func yankPop() -> Bool {
        guard case .yank(let range) = lastEdit, range.upperBound <= characters.count,
              let text = killRing.rotate() else {
            lastEdit = .other
            return false
        }
        lastEdit = .yank(replace(range, with: text))
        return true
    }

    /// Swaps the character before the cursor with the one under it and moves right (Ctrl-T); at
    /// the end of the text, swaps the last two. Does nothing at the start or with fewer than two.
    @discardableResult
    public mutating func transpose() -> Bool {
        lastEdit = .other
        guard cursor > 0, characters.count >= 2 else { return false }
        let first = cursor == characters.count ? cursor - 2 : cursor - 1
        let swapped = String(characters[first + 1]) + String(characters[first])
        replace(first..<first + 2, with: swapped)
        return true
    }

    /// Removes `range` into the kill ring, merging with the previous kill when the last command
    /// was one.
    private mutating func kill(_ range: Range<Int>, merging merge: KillRing.Merge) -> Bool {
        guard !range.isEmpty else { return false }
        killRing.kill(String(characters[range]), merging: lastEdit == .kill ? merge : .none)
        replace(range, with: "")
        lastEdit = .kill
        return true
    }
}
