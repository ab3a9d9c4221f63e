import Model
@testable import Services
import Testing

/// What a feed says reaches terminals as plain text: no control characters (ESC, BEL, the C1
/// range), no bidi overrides, and only http and https links.
@Suite struct FeedPlainTextTests {
    /// ESC [2J clears the screen, ESC ] 0 ; retitles the window, OSC 52 writes the clipboard.
    static let hostile = "A\u{1B}[2J\u{1B}]0;pwned\u{7}B\u{9B}31m\u{1B}]52;c;aGk=\u{7}C\u{202E}D\u{2066}E\u{0}F"

    @Test func controlAndBidiCharactersAreStrippedFromJSONFeedText() throws {
        let json: Value = [
            "version": "https://jsonfeed.org/version/1.1",
            "title": .string(Self.hostile),
            "items": [["id": "1", "title": .string(Self.hostile), "content_text": .string(Self.hostile),
                       "url": "javascript:alert(1)"]],
        ]
        let feed = try FeedParserTests.parse(json.jsonText)
        let item = try #require(feed.items.first)
        for text in [feed.title, item.title, item.summary] {
            #expect(text == "A[2J]0;pwnedB31m]52;c;aGk=CDEF", "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        #expect(item.link == nil, "a javascript: link is not kept")
    }

    /// XML itself refuses ESC and BEL, even escaped (the document is then not a feed); C1
    /// controls and bidi overrides it allows.
    @Test func escapedControlsInXMLAreStrippedAfterDecoding() throws {
        let feed = try FeedParserTests.parse("""
            <rss version="2.0"><channel><title>T&#x9B;[2Jitle</title>
            <item><title>x&#x85;]0;y&#x202D;z</title><link>file:///etc/passwd</link><description>a&#x9B;b&#x202E;c</description></item>
            <item><title>ok</title><link>https://example.org/a</link></item>
            </channel></rss>
            """)
        #expect(feed.title == "T[2Jitle")
        #expect(feed.items.map(\.title) == ["x ]0;yz", "ok"], "U+0085 is a line break, so a space")
        #expect(feed.items.first?.summary == "abc")
        #expect(feed.items.map(\.link) == [nil, "https://example.org/a"])
    }
}
