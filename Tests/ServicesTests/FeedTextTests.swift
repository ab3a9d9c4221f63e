@testable import Services
import Testing

/// Dates, character references and HTML in feeds.
@Suite struct FeedTextTests {
    /// 2024-06-15 12:00:00 UTC.
    static let noon = 1_718_452_800.0

    @Test(arguments: [
        ("Sat, 15 Jun 2024 12:00:00 GMT", noon),
        ("Sat, 15 Jun 2024 12:00:00 +0000", noon),
        ("15 Jun 2024 12:00:00 UT", noon),
        ("Saturday, 15 June 2024 14:00:00 +02:00", noon),
        ("Sat, 15 Jun 24 08:00:00 EDT", noon),
        ("Sat, 15 Jun 2024 05:00 PDT", noon),
        ("15 Jun 2024 12:00", noon),
        ("Sat,15 Jun 2024 12:00:00 Z", noon),
        ("Jun 15 2024 12:00:00 GMT", noon),
        ("Sat, 15 Jun 2024 12:00:00 XYZ", noon),
        ("Tue, 01 Jan 99 00:00:00 GMT", 915_148_800),
        ("2024-06-15T12:00:00Z", noon),
        ("2024-06-15T12:00:00.5Z", noon + 0.5),
        ("2024-06-15T14:00:00+02:00", noon),
        ("2024-06-15T12:00:00", noon),
        ("2024-06-15 12:00:00", noon),
        ("2024-06-15T07:00-05:00", noon),
        ("2024-06-15", noon - 12 * 3600),
        ("  2024-06-15T12:00:00Z\n", noon),
    ])
    func datesFeedsWrite(text: String, seconds: Double) {
        #expect(FeedDate.parse(text) == seconds, "\(text)")
    }

    @Test(arguments: ["", "yesterday", "Sat, 45 Jun 2024 12:00:00 GMT", "15 Foo 2024", "2024-13-01T00:00:00Z",
                      "15 Jun 2024 25:00:00 GMT", "2024-06"])
    func datesThatAreNotDates(text: String) {
        #expect(FeedDate.parse(text) == nil, "\(text)")
    }

    @Test func characterReferences() {
        #expect(HTMLText.decodingEntities("Caf&eacute; &amp; &lt;b&gt; &#233;&#xE9;&#XE9; &hellip;") == "Café & <b> ééé …")
        #expect(HTMLText.decodingEntities("AT&T &unknown; &amp &#; &#xZZ; & ;") == "AT&T &unknown; &amp &#; &#xZZ; & ;",
                "what is not a reference stays as written")
        #expect(HTMLText.decodingEntities("&#0; &#xD800; &#x110000;") == "\u{FFFD} \u{FFFD} \u{FFFD}")
        #expect(HTMLText.decodingEntities("&amp;amp;") == "&amp;", "one level of decoding")
    }

    @Test func htmlBecomesOneLineOfText() {
        #expect(HTMLText.plainText(fromHTML: "<p>One</p>\n<p>Two <b>bold</b>, <a href=\"x\">link</a>.</p>") == "One Two bold, link.")
        #expect(HTMLText.plainText(fromHTML: "a<br/>b<!-- hidden <p> -->c") == "a bc")
        #expect(HTMLText.plainText(fromHTML: "<style>p { color: red }</style>x<SCRIPT>if (a < b) {}</SCRIPT>y") == "xy")
        #expect(HTMLText.plainText(fromHTML: "1 < 2 &amp;&amp; 3 > 2") == "1 < 2 && 3 > 2")
        #expect(HTMLText.plainText(fromHTML: "unclosed <b") == "unclosed <b")
        #expect(HTMLText.plainText(fromHTML: "  spaced \t\n out  ") == "spaced out")
        #expect(HTMLText.collapsingWhitespace("\u{A0}a\u{A0}\u{3000}b\u{2028}c\u{85}d\u{2009}é\u{1680}") == "a b c d é",
                "Unicode's spaces fold too")
        #expect(HTMLText.collapsingWhitespace("日本\u{2010}語") == "日本\u{2010}語", "a hyphen is not a space")
        #expect(HTMLText.trimmed(" \u{A0}x y\n") == "x y")
    }

    @Test func backoffDoublesUpToTheCapAndNeverBelowTheInterval() {
        var settings = FeedSettings()
        settings.maxBackoff = 3600
        #expect((0...5).map { settings.delay(interval: 600, failures: $0) } == [600, 1200, 2400, 3600, 3600, 3600])
        #expect(settings.delay(interval: 7200, failures: 3) == 7200, "a cap below the interval is the interval")
        #expect(settings.delay(interval: 0.5, failures: 100) == 3600)
    }
}
