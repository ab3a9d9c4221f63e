import LineEditing
import Model

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
    /// takes one, a control character its escape's (``visible(_:)``); everything else is
    /// measured by the line editor's ``LineEditing/ColumnWidth``, so views and the prompt agree.
    static func of(_ character: Character) -> Int {
        if let ascii = character.asciiValue, ascii >= 0x20 && ascii != 0x7F { return 1 }
        if character == "\t" { return ColumnWidth.tabWidth }
        // A control character or bidirectional mark is a grapheme of its own (CR LF aside, both
        // controls): it takes the columns of the escape ``visible(_:)`` writes for it.
        if character.unicodeScalars.contains(where: isDisplayHazard) {
            return character.unicodeScalars.reduce(0) { $0 + escapeSequence($1).utf8.count }
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
        // Nothing but a tab and what is written as an escape takes more columns than it has
        // UTF-8 bytes (printable ASCII one a byte, the rest at most two in two to four), so text
        // of at most `width` bytes without them fits as it is: no character measured. A frame
        // cuts every row it shows, and a table's `─` rule walked a grapheme at a time took a
        // tenth of a key's frame.
        if text.utf8.count <= width && !mayBeWiderThanItsBytes(text) { return text }
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

    /// `text` as it may be written to a terminal: nothing in it acts on the terminal, and
    /// nothing of it is hidden. A character that would change how the terminal shows the text
    /// (``Model/isDisplayHazard(_:)``: ESC, CR, LF, BEL, NUL, DEL, a C1 control, a bidirectional
    /// override; a view's text from a store, a feed or a remote command could otherwise leave the
    /// alternate screen, retitle the window or clear it) is written as its escape, `\u{1B}`, as
    /// every text from outside is shown (``Model/displayable(_:)``), so an escape sequence in data
    /// reads as one instead of its parameters showing as if they were the text; a tab becomes its
    /// spaces. ``of(_:)`` counts the columns of each, so a laid-out row keeps its width.
    static func visible(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\t" {
                result.append(contentsOf: spaces(ColumnWidth.tabWidth).unicodeScalars)
            } else if isDisplayHazard(scalar) {
                result.append(contentsOf: escapeSequence(scalar).unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// Whether `text` may take more columns than it has UTF-8 bytes: it has a tab, or a
    /// character ``visible(_:)`` writes as an escape (C0 and DEL, C1 as `C2 80`–`C2 9F`, the
    /// marks U+200E, U+200F, U+202A–U+202E, U+2066–U+2069). Read from its bytes in place (a frame
    /// asks it of every row it shows; through the UTF-8 view's iterator that was a twentieth of a
    /// key's frame).
    private static func mayBeWiderThanItsBytes(_ text: String) -> Bool {
        func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte < 0x20 || byte == 0x7F { return true }
                if byte == 0xC2, index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) { return true }
                if byte == 0xE2, index + 2 < bytes.count {
                    let second = bytes[index + 1], third = bytes[index + 2]
                    if second == 0x80 && (third == 0x8E || third == 0x8F || (0xAA...0xAE).contains(third)) { return true }
                    if second == 0x81 && (0xA6...0xA9).contains(third) { return true }
                }
                index += 1
            }
            return false
        }
        return text.utf8.withContiguousStorageIfAvailable(scan) ?? Array(text.utf8).withUnsafeBufferPointer(scan)
    }

    /// The width of `text` when it is printable ASCII only, else nil.
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
