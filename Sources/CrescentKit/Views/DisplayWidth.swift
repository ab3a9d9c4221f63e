import LineEditing

/// How many terminal columns text takes: wide East Asian characters and emoji take two,
/// combining marks and zero-width characters none, everything else one; plus truncating and
/// padding to a width.
enum DisplayWidth {
    /// The columns `text` takes.
    static func of(_ text: String) -> Int {
        // Printable ASCII, what most lines are, takes a column a byte: counted without walking
        // grapheme clusters (a frame measures every row it shows).
        if let width = asciiWidth(text) { return width }
        var width = 0
        for character in text { width += of(character) }
        return width
    }

    /// The columns one grapheme cluster takes (an emoji sequence counts once). Printable ASCII
    /// takes one and control characters none (views do not draw them); everything else is
    /// measured by the line editor's ``LineEditing/ColumnWidth``, so views and the prompt agree.
    static func of(_ character: Character) -> Int {
        if let ascii = character.asciiValue {
            if ascii == 0x09 { return ColumnWidth.tabWidth }
            return ascii >= 0x20 && ascii != 0x7F ? 1 : 0
        }
        return ColumnWidth.of(character)
    }

    /// `text` wrapped at `width` columns between words (a word wider than the line stays whole
    /// on a line of its own): prose that follows the terminal's width instead of breaking
    /// mid-word where the terminal does.
    static func wrap(_ text: String, to width: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let candidate = current.isEmpty ? String(word) : current + " " + word
            if of(candidate) <= width || current.isEmpty {
                current = candidate
            } else {
                lines.append(current)
                current = String(word)
            }
        }
        lines.append(current)
        return lines
    }

    /// `text` cut to at most `width` columns, ending in `…` when something was cut.
    static func truncate(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        // Nothing but a tab takes more columns than it has UTF-8 bytes (printable ASCII one a
        // byte, the rest at most two in two to four), so text of at most `width` bytes without a
        // tab fits as it is: no character measured. A frame cuts every row it shows, and a
        // table's `─` rule walked a grapheme at a time took a tenth of a key's frame.
        if text.utf8.count <= width && !containsTab(text) { return text }
        guard of(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let next = of(character)
            if used + next > width - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }

    /// `text` as it may be written to a terminal: nothing in it acts on the terminal. Control
    /// characters (ESC, CR, LF, BEL, NUL, DEL: a view's text from a store, a feed or a remote
    /// command could otherwise leave the alternate screen, retitle the window or clear it) and
    /// the bidirectional overrides are dropped, a tab becomes its spaces, a C1 control U+FFFD:
    /// the columns ``of(_:)`` counts for each, so a laid-out row keeps its width.
    static func visible(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09: result.append(contentsOf: spaces(ColumnWidth.tabWidth).unicodeScalars)
            case 0..<0x20, 0x7F, 0x202A...0x202E, 0x2066...0x2069: continue
            case 0x80...0x9F: result.append("\u{FFFD}")
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    /// The width of `text` when it is printable ASCII only, else nil.
    /// Whether `text` has a tab, read from its bytes in place (a frame asks it of every row it
    /// shows; through the UTF-8 view's iterator that was a twentieth of a key's frame).
    private static func containsTab(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.contains(0x09) } ?? text.utf8.contains(0x09)
    }

    private static func asciiWidth(_ text: String) -> Int? {
        var count = 0
        for byte in text.utf8 {
            guard byte >= 0x20 && byte < 0x7F else { return nil }
            count += 1
        }
        return count
    }

    /// `text` padded with spaces to `width` columns, on the right (or the left for `.right`).
    static func pad(_ text: String, to width: Int, alignRight: Bool = false) -> String {
        let missing = width - of(text)
        guard missing > 0 else { return text }
        let spaces = spaces(missing)
        return alignRight ? spaces + text : text + spaces
    }

    /// A run of spaces to copy from: `String(repeating:count:)` appends its string once per
    /// space, which cost a frame more than the rest of its layout.
    private static let blanks = [UInt8](repeating: 0x20, count: 256)

    /// `count` spaces.
    static func spaces(_ count: Int) -> String {
        guard count > blanks.count else { return String(decoding: blanks[..<max(count, 0)], as: UTF8.self) }
        return String(decoding: [UInt8](repeating: 0x20, count: count), as: UTF8.self)
    }

    /// `text` fitted to exactly `width` columns: truncated or padded.
    static func fit(_ text: String, to width: Int, alignRight: Bool = false) -> String {
        pad(truncate(text, to: width), to: width, alignRight: alignRight)
    }
}
