import Foundation

/// Feed documents for tests: the same numbered items as RSS 2.0, Atom 1.0 or JSON Feed 1.1.
///
/// Item `n` has the id `item-n`, the title `Item n & more`, the relative link `/posts/n`, an
/// HTML summary, and is dated `n` hours after 2024-06-15 12:00 UTC, so higher numbers are newer.
public enum FeedSamples {
    /// The items numbered `numbers`.
    public static func items(_ numbers: ClosedRange<Int>) -> [Int] { Array(numbers) }

    /// Seconds since the epoch of item `n`.
    public static func date(of number: Int) -> Double { 1_718_452_800 + Double(number) * 3600 }

    public static func rss(title: String = "Sample news", items: [Int]) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let entries = items.map { number in
            """
                <item>
                  <title>Item \(number) &amp; more</title>
                  <link>/posts/\(number)</link>
                  <guid isPermaLink="false">item-\(number)</guid>
                  <pubDate>\(formatter.string(from: Date(timeIntervalSince1970: date(of: number))))</pubDate>
                  <description><![CDATA[<p>Summary of item \(number).</p>]]></description>
                </item>
            """
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0">
              <channel>
                <title>\(title)</title>
                <link>/</link>
            \(entries.joined(separator: "\n"))
              </channel>
            </rss>
            """
    }

    public static func atom(title: String = "Sample news", items: [Int]) -> String {
        let formatter = ISO8601DateFormatter()
        let entries = items.map { number in
            """
              <entry>
                <title>Item \(number) &amp; more</title>
                <link href="/posts/\(number)"/>
                <id>item-\(number)</id>
                <updated>\(formatter.string(from: Date(timeIntervalSince1970: date(of: number))))</updated>
                <summary type="html">&lt;p&gt;Summary of item \(number).&lt;/p&gt;</summary>
              </entry>
            """
        }
        return """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom">
              <title>\(title)</title>
              <id>urn:sample</id>
              <updated>2024-06-15T12:00:00Z</updated>
            \(entries.joined(separator: "\n"))
            </feed>
            """
    }

    public static func json(title: String = "Sample news", items: [Int]) -> String {
        let formatter = ISO8601DateFormatter()
        let entries = items.map { number in
            #"{"id": "item-\#(number)", "title": "Item \#(number) & more", "url": "/posts/\#(number)", "#
                + #""content_html": "<p>Summary of item \#(number).</p>", "#
                + #""date_published": "\#(formatter.string(from: Date(timeIntervalSince1970: date(of: number))))"}"#
        }
        return #"{"version": "https://jsonfeed.org/version/1.1", "title": "\#(title)", "items": [\#(entries.joined(separator: ", "))]}"#
    }
}
