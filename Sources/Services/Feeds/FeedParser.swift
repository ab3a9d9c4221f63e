public import Model

/// Reads a feed document: RSS 2.0 (and 0.9x, and 1.0/RDF), Atom 1.0 or JSON Feed 1.0/1.1,
/// chosen by what the document is, not by its content type.
///
/// What it tolerates, since real feeds do it: a UTF-8 byte order mark and blank lines before the
/// XML declaration; the encodings ``XMLEncoding`` reads; CDATA; HTML entities (`&nbsp;`) and
/// bare `&` in XML (see ``XMLReader``); missing and odd dates (see ``FeedDate``); duplicate ids (the first
/// entry is kept); entries without an id (see ``FeedItem/id``); relative links (resolved against
/// `xml:base` and the feed's URL).
///
/// A document it cannot read fails with `invalid_data` saying why:
/// `not RSS, Atom or JSON Feed: root element <html>`,
/// `malformed XML at line 3, column 14: the end tag </item> does not match <title>`,
/// `malformed JSON Feed: "items" must be an array`.
///
/// ```swift
/// let feed = try FeedParser.parse(bytes, url: "https://example.org/feed.xml")
/// print(feed.title, feed.items.count)
/// ```
public enum FeedParser {
    /// The feed in `bytes`, fetched from `url` (the base of relative links and each item's `feed`).
    public static func parse(_ bytes: [UInt8], url: String) throws(ServiceError) -> ParsedFeed {
        // UTF-16 (with its byte order mark or without) can only be XML: JSON Feed is UTF-8.
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF])
            || bytes.starts(with: [0x3C, 0]) || bytes.starts(with: [0, 0x3C]) {
            return try parseXML(bytes, url: url)
        }
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        guard start < bytes.count else { throw ServiceError(.invalidData, "not RSS, Atom or JSON Feed: the document is empty") }
        let body = start == 0 ? bytes : Array(bytes[start...])
        switch body[0] {
        case UInt8(ascii: "<"): return try parseXML(body, url: url)
        case UInt8(ascii: "{"): return try JSONFeedReader.parse(body, url: url)
        default:
            throw ServiceError(.invalidData, "not RSS, Atom or JSON Feed: the document starts with \(describe(body.prefix(20)))")
        }
    }

    private static func parseXML(_ bytes: [UInt8], url: String) throws(ServiceError) -> ParsedFeed {
        var xml = try XMLReader(bytes: bytes)
        var reader = XMLFeedReader(url: url)
        do {
            try reader.read(&xml)
        } catch where reader.rootName == nil {
            // The reader stopped before the root element: an HTML page often does (unquoted
            // attributes), and saying so helps more than the reader's complaint.
            let head = String(decoding: xml.buffer.prefix(1024), as: UTF8.self).lowercased()
            if head.contains("<html") { throw ServiceError(.invalidData, "not RSS, Atom or JSON Feed: root element <html>") }
            throw ServiceError(.invalidData, "not RSS, Atom or JSON Feed: no root element could be read (\(error.message))")
        }
        guard let format = reader.format else {
            throw ServiceError(.invalidData, "not RSS, Atom or JSON Feed: root element <\(reader.rootName ?? "")>")
        }
        let title = reader.title
        return ParsedFeed(title: title, homePage: reader.homePage, items: reader.drafts.items(feed: url, feedTitle: title),
                          format: format)
    }

    /// The first bytes of a document, for a message: `"HTTP/1.1 …"` or `bytes 00 ff …`.
    static func describe(_ bytes: ArraySlice<UInt8>) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        if !text.contains("\u{FFFD}"), text.unicodeScalars.allSatisfy({ $0.value >= 0x20 || $0 == "\n" || $0 == "\t" }) {
            return "\"\(String(text.map { $0 == "\n" ? " " : $0 }))…\""
        }
        return "bytes " + bytes.prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
    }
}
