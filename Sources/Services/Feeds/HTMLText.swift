/// Text out of the HTML that feeds put in titles and summaries.
///
/// - ``decodingEntities(_:)`` turns named (`&eacute;`, HTML 4.01's list), decimal (`&#233;`) and
///   hex (`&#xE9;`) character references into characters; an unknown name or a reference without
///   its `;` stays as written, and a reference to an invalid code point becomes U+FFFD.
/// - ``plainText(fromHTML:)`` drops tags, comments and the contents of `script` and `style`,
///   decodes references and folds every run of whitespace (line breaks and no-break spaces
///   included) into one space, so a summary reads as one paragraph in a text view.
/// - Both plain-text forms drop control characters and bidi overrides (see
///   ``controlLength(_:at:)``): what a feed says is shown as text, never run by a terminal.
///
/// Both work on UTF-8 bytes: markup is ASCII, and the text between it is copied as it is.
///
/// ```swift
/// HTMLText.plainText(fromHTML: "<p>Caf&eacute; &amp; <b>bar</b></p>")   // "Café & bar"
/// ```
enum HTMLText {
    /// `text` with its character references decoded.
    static func decodingEntities(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        var output: [UInt8] = []
        decodeEntities(Array(text.utf8), into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// The readable text of an HTML fragment, on one line.
    static func plainText(fromHTML html: String) -> String {
        let bytes = Array(html.utf8)
        guard bytes.contains(where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "&") }) else {
            return collapsingWhitespace(html)
        }
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count)
        var position = 0
        while position < bytes.count {
            let byte = bytes[position]
            // Only "<" before a name, "/", "!" or "?" opens a tag: "1 < 2" is text.
            guard byte == UInt8(ascii: "<"), position + 1 < bytes.count, opensTag(bytes[position + 1]) else {
                text.append(byte)
                position += 1
                continue
            }
            if starts(bytes, at: position, with: "<!--") {
                position = index(after: "-->", in: bytes, from: position + 4) ?? bytes.count
                continue
            }
            guard let close = bytes[position...].firstIndex(of: UInt8(ascii: ">")) else {
                // An unclosed tag is text ("<b" at the very end).
                text.append(contentsOf: bytes[position...])
                break
            }
            let isEndTag = bytes[position + 1] == UInt8(ascii: "/")
            let name = tagName(bytes, from: position + (isEndTag ? 2 : 1))
            position = close + 1
            if !isEndTag, name == "script" || name == "style" {
                // Their contents are code, not text: skip past the closing tag.
                let end = index(after: "</" + name, in: bytes, from: position, caseInsensitive: true)
                position = end.flatMap { bytes[$0...].firstIndex(of: UInt8(ascii: ">")).map { $0 + 1 } } ?? bytes.count
            }
            // Block tags separate words ("<p>a</p><p>b</p>" is "a b"); inline ones do not
            // ("<b>bold</b>," stays "bold,").
            if blockTags.contains(name) { text.append(UInt8(ascii: " ")) }
        }
        var decoded: [UInt8] = []
        decodeEntities(text, into: &decoded)
        return String(decoding: collapse(decoded), as: UTF8.self)
    }

    /// `text` with every run of whitespace made one space, without leading or trailing space.
    static func collapsingWhitespace(_ text: String) -> String {
        String(decoding: collapse(Array(text.utf8)), as: UTF8.self)
    }

    /// `text` without leading and trailing whitespace.
    static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isWhitespace($0) }),
              let last = scalars.lastIndex(where: { !isWhitespace($0) }) else { return "" }
        return String(scalars[first...last])
    }

    // MARK: Pieces

    /// Elements that start a new line in a browser.
    private static let blockTags: Set<String> = [
        "p", "br", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th",
        "table", "blockquote", "pre", "hr", "section", "article", "header", "footer", "figure", "figcaption", "img",
    ]

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        // ASCII first: a Unicode property lookup per character is the slow part of a summary.
        if scalar.isASCII { return scalar == " " || ("\t"..."\r").contains(scalar) }
        return scalar.properties.isWhitespace
    }

    /// UTF-8 `bytes` with every run of whitespace made one space, without leading or trailing space.
    private static func collapse(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var pendingSpace = false
        var position = 0
        while position < bytes.count {
            let space = whitespaceLength(bytes, at: position)
            let control = space > 0 ? 0 : controlLength(bytes, at: position)
            if space > 0 {
                pendingSpace = !output.isEmpty
                position += space
            } else if control > 0 {
                position += control
            } else {
                if pendingSpace { output.append(UInt8(ascii: " ")) }
                pendingSpace = false
                output.append(bytes[position])
                position += 1
            }
        }
        return output
    }

    /// How many bytes the control character at `position` takes (0 when it is not one): C0
    /// controls and DEL, C1 controls (U+0080–U+009F) and the bidi embeddings, overrides and
    /// isolates (U+202A–U+202E, U+2066–U+2069). Text from the network is printed to terminals,
    /// where ESC, BEL and OSC sequences would clear the screen, retitle the window or write the
    /// clipboard, and bidi overrides would make text read other than it is.
    private static func controlLength(_ bytes: [UInt8], at position: Int) -> Int {
        let byte = bytes[position]
        if byte < 0x80 { return byte < 0x20 || byte == 0x7F ? 1 : 0 }
        func next(_ offset: Int) -> UInt8 { position + offset < bytes.count ? bytes[position + offset] : 0 }
        switch byte {
        case 0xC2: return (0x80...0x9F).contains(next(1)) ? 2 : 0
        case 0xE2:
            if next(1) == 0x80 && (0xAA...0xAE).contains(next(2)) { return 3 }
            if next(1) == 0x81 && (0xA6...0xA9).contains(next(2)) { return 3 }
            return 0
        default: return 0
        }
    }

    /// How many bytes the whitespace character at `position` takes (0 when it is not one):
    /// ASCII's, and Unicode's others in UTF-8 (U+0085, U+00A0, U+1680, U+2000–U+200A,
    /// U+2028, U+2029, U+202F, U+205F, U+3000).
    private static func whitespaceLength(_ bytes: [UInt8], at position: Int) -> Int {
        let byte = bytes[position]
        if byte < 0x80 { return byte == 0x20 || (0x09...0x0D).contains(byte) ? 1 : 0 }
        func next(_ offset: Int) -> UInt8 { position + offset < bytes.count ? bytes[position + offset] : 0 }
        switch byte {
        case 0xC2: return next(1) == 0x85 || next(1) == 0xA0 ? 2 : 0
        case 0xE1: return next(1) == 0x9A && next(2) == 0x80 ? 3 : 0
        case 0xE2:
            if next(1) == 0x80, (0x80...0x8A).contains(next(2)) || [0xA8, 0xA9, 0xAF].contains(next(2)) { return 3 }
            return next(1) == 0x81 && next(2) == 0x9F ? 3 : 0
        case 0xE3: return next(1) == 0x80 && next(2) == 0x80 ? 3 : 0
        default: return 0
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte | 0x20) }
    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    private static func opensTag(_ byte: UInt8) -> Bool {
        isLetter(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "!") || byte == UInt8(ascii: "?")
    }

    /// The lower-case ASCII name starting at `start` (letters and digits).
    private static func tagName(_ bytes: [UInt8], from start: Int) -> String {
        var end = start
        while end < bytes.count, isLetter(bytes[end]) || isDigit(bytes[end]) { end += 1 }
        return String(decoding: bytes[start..<end].map { isLetter($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    private static func starts(_ bytes: [UInt8], at position: Int, with text: String) -> Bool {
        bytes[position...].starts(with: text.utf8)
    }

    /// The position just past the first `text` at or after `position`, or nil.
    private static func index(after text: String, in bytes: [UInt8], from position: Int, caseInsensitive: Bool = false) -> Int? {
        let pattern = Array(text.utf8)
        guard let first = pattern.first, pattern.count <= bytes.count else { return nil }
        var index = position
        while index + pattern.count <= bytes.count {
            if bytes[index] == first || (caseInsensitive && bytes[index] | 0x20 == first | 0x20) {
                var matched = true
                for offset in 1..<pattern.count {
                    let a = bytes[index + offset], b = pattern[offset]
                    if a != b && !(caseInsensitive && isLetter(a) && a | 0x20 == b | 0x20) { matched = false; break }
                }
                if matched { return index + pattern.count }
            }
            index += 1
        }
        return nil
    }

    /// Appends `bytes` to `output` with character references decoded.
    private static func decodeEntities(_ bytes: [UInt8], into output: inout [UInt8]) {
        output.reserveCapacity(output.count + bytes.count)
        var position = 0
        while position < bytes.count {
            guard bytes[position] == UInt8(ascii: "&"), let (scalar, length) = reference(in: bytes, at: position) else {
                output.append(bytes[position])
                position += 1
                continue
            }
            UTF8.encode(scalar) { output.append($0) }
            position += length
        }
    }

    /// The character a reference at `start` (an `&`) stands for, and how many bytes it takes.
    private static func reference(in bytes: [UInt8], at start: Int) -> (Unicode.Scalar, Int)? {
        // The longest HTML 4.01 entity name has 8 letters; a numeric one at most "#x10FFFF".
        let longest = 10
        var cursor = start + 1
        while cursor < bytes.count, bytes[cursor] != UInt8(ascii: ";"), cursor - start <= longest {
            let byte = bytes[cursor]
            guard isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "#") else { return nil }
            cursor += 1
        }
        guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ";"), cursor > start + 1 else { return nil }
        let name = bytes[(start + 1)..<cursor]
        let length = cursor + 1 - start
        if name.first == UInt8(ascii: "#") {
            let isHex = name.count > 1 && name[name.startIndex + 1] | 0x20 == UInt8(ascii: "x")
            let digits = String(decoding: name.dropFirst(isHex ? 2 : 1), as: UTF8.self)
            guard let code = UInt32(digits, radix: isHex ? 16 : 10) else { return nil }
            // NUL and surrogates are not characters; HTML replaces them.
            return (code != 0 ? Unicode.Scalar(code) ?? "\u{FFFD}" : "\u{FFFD}", length)
        }
        guard let scalar = HTMLEntities.scalar(named: Substring(String(decoding: name, as: UTF8.self))) else { return nil }
        return (scalar, length)
    }
}
