import Foundation

/// Text out of the HTML that feeds put in titles and summaries.
///
/// - ``decodingEntities(_:)`` turns named (`&eacute;`, HTML 4.01's list), decimal (`&#233;`) and
///   hex (`&#xE9;`) character references into characters; an unknown name or a reference without
///   its `;` stays as written, and a reference to an invalid code point becomes U+FFFD.
/// - ``plainText(fromHTML:)`` drops tags, comments and the contents of `script` and `style`,
///   decodes references and folds every run of whitespace (line breaks included) into one space,
///   so a summary reads as one paragraph in a text view.
///
/// ```swift
/// HTMLText.plainText(fromHTML: "<p>Caf&eacute; &amp; <b>bar</b></p>")   // "Café & bar"
/// ```
enum HTMLText {
    /// `text` with its character references decoded.
    static func decodingEntities(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        let scalars = text.unicodeScalars
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            if scalar == "&", let (decoded, next) = reference(in: scalars, at: index) {
                result.unicodeScalars.append(decoded)
                index = next
            } else {
                result.unicodeScalars.append(scalar)
                index = scalars.index(after: index)
            }
        }
        return result
    }

    /// The character a reference starting at `start` (an `&`) stands for, and where it ends.
    static func reference(in scalars: String.UnicodeScalarView,
                          at start: String.UnicodeScalarView.Index) -> (Unicode.Scalar, String.UnicodeScalarView.Index)? {
        // The longest HTML 4.01 entity name has 8 letters; a numeric one at most "#x10FFFF".
        let longest = 10
        var cursor = scalars.index(after: start)
        let nameStart = cursor
        var length = 0
        while cursor < scalars.endIndex, scalars[cursor] != ";", length <= longest {
            let scalar = scalars[cursor]
            guard scalar.properties.isASCIIHexDigit || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                    || scalar == "#" else { return nil }
            cursor = scalars.index(after: cursor)
            length += 1
        }
        guard cursor < scalars.endIndex, scalars[cursor] == ";", length > 0 else { return nil }
        let name = String(scalars[nameStart..<cursor])
        let end = scalars.index(after: cursor)
        if name.hasPrefix("#") {
            let digits = name.dropFirst()
            let isHex = digits.first == "x" || digits.first == "X"
            guard let code = UInt32(isHex ? digits.dropFirst() : digits, radix: isHex ? 16 : 10) else { return nil }
            // NUL and surrogates are not characters; HTML replaces them.
            return (code != 0 ? Unicode.Scalar(code) ?? "\u{FFFD}" : "\u{FFFD}", end)
        }
        guard let scalar = HTMLEntities.scalar(named: Substring(name)) else { return nil }
        return (scalar, end)
    }

    /// The readable text of an HTML fragment, on one line.
    static func plainText(fromHTML html: String) -> String {
        guard html.utf8.contains(where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "&") }) else {
            return collapsingWhitespace(html)
        }
        var text = ""
        var rest = Substring(html)
        while let open = rest.firstIndex(of: "<") {
            text += rest[..<open]
            rest = rest[open...]
            // Only "<" before a name, "/", "!" or "?" opens a tag: "1 < 2" is text.
            guard let next = rest.dropFirst().first, next.isLetter || "/!?".contains(next) else {
                text += "<"
                rest = rest.dropFirst()
                continue
            }
            if rest.hasPrefix("<!--") {
                rest = rest.range(of: "-->").map { rest[$0.upperBound...] } ?? ""
                continue
            }
            guard let close = rest.firstIndex(of: ">") else {
                // A lone "<" (as in "a < b") is text.
                text += rest
                rest = ""
                break
            }
            let tag = rest[rest.index(after: open)..<close]
            rest = rest[rest.index(after: close)...]
            let name = tag.prefix { $0.isLetter || $0.isNumber }.lowercased()
            if name == "script" || name == "style" {
                // Their contents are code, not text: skip to the closing tag.
                rest = rest.range(of: "</\(name)", options: .caseInsensitive)
                    .map { range in rest[range.upperBound...].drop { $0 != ">" }.dropFirst() } ?? ""
            }
            // Block tags separate words ("<p>a</p><p>b</p>" is "a b"); inline ones do not
            // ("<b>bold</b>," stays "bold,").
            let closing = tag.hasPrefix("/") ? tag.dropFirst().prefix { $0.isLetter || $0.isNumber }.lowercased() : name
            if Self.blockTags.contains(closing) { text += " " }
        }
        text += rest
        return collapsingWhitespace(decodingEntities(text))
    }

    /// Elements that start a new line in a browser.
    private static let blockTags: Set<String> = [
        "p", "br", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th",
        "table", "blockquote", "pre", "hr", "section", "article", "header", "footer", "figure", "figcaption", "img",
    ]

    /// `text` with every run of whitespace made one space, without leading or trailing space.
    static func collapsingWhitespace(_ text: String) -> String {
        var result = ""
        var pendingSpace = false
        for character in text {
            if character.isWhitespace {
                pendingSpace = !result.isEmpty
            } else {
                if pendingSpace { result.append(" ") }
                pendingSpace = false
                result.append(character)
            }
        }
        return result
    }
}
