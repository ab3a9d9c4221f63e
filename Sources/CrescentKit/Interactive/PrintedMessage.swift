/// The status line's message from what was printed: the first line with text of the latest
/// write that had any, read together with the start of its line (`print("line", 7)` writes
/// `line`, a tab, `7` and a newline, and shows `line 7`); for stderr (a handler's error and its
/// traceback) the first line of the write. Tabs show as spaces. Cut at ``maxBytes``, so one
/// write costs its own length, however long the lines printed before it.
struct PrintedMessage {
    static let maxBytes = 1024
    /// The text after the last newline printed (cut at ``maxBytes``).
    private var partial = ""
    private var latest = ""
    private var isNew = false

    /// Takes `text` written to `stream`; true when a message became waiting (none was before).
    mutating func add(_ stream: Console.Stream, _ text: String) -> Bool {
        let lastNewline = text.utf8.lastIndex(of: UInt8(ascii: "\n"))
        let hasText = text.utf8.contains { !Self.isBlank($0) }
        if hasText {
            let line = stream == .error ? Self.firstLine(of: text[...]) : Self.firstLine(of: Substring(partial) + text[...])
            latest = line
        }
        if stream == .output {
            if let lastNewline {
                partial = Self.cut(text[text.utf8.index(after: lastNewline)...])
            } else if partial.utf8.count < Self.maxBytes {
                partial = Self.cut(Substring(partial + text))
            }
        }
        guard hasText, !isNew else { return false }
        isNew = true
        return true
    }

    /// The message, if a new one was printed since the last take.
    mutating func take() -> String? {
        guard isNew else { return nil }
        isNew = false
        return latest
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
    }

    /// The first line of `text` that is not blank, cut at ``maxBytes``; tabs as spaces.
    private static func firstLine(of text: Substring) -> String {
        var rest = text
        while !rest.isEmpty {
            let end = rest.firstIndex(where: \.isNewline) ?? rest.endIndex
            let line = rest[..<end]
            if line.utf8.contains(where: { !isBlank($0) }) { return String(cut(line).map { $0 == "\t" ? " " : $0 }) }
            rest = end == rest.endIndex ? "" : rest[rest.index(after: end)...]
        }
        return ""
    }

    /// `text`'s first ``maxBytes`` bytes, cut at a scalar's end (the scalar view rounds the
    /// index down to one).
    private static func cut(_ text: Substring) -> String {
        guard text.utf8.count > maxBytes else { return String(text) }
        let end = text.utf8.index(text.utf8.startIndex, offsetBy: maxBytes)
        return String(text.unicodeScalars[..<end])
    }
}
