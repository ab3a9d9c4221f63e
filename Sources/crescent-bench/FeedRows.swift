import Foundation
import Model
import Services

/// The feeds row: how fast a feed document becomes items.
///
/// The baseline is CPython's standard library doing the same job on the same bytes, measured in
/// the same run: `xml.etree.ElementTree` (expat) for the tree, `email.utils` for the RFC 822
/// dates, `html.unescape` and a regular expression for the HTML summaries.
enum FeedRows {
    static let itemCount = 500
    static let rounds = 20

    // MARK: feed-parse

    /// Items per second: a 500-item RSS 2.0 document (about 400 KB: entities in titles, CDATA
    /// HTML descriptions, RFC 822 dates) parsed into items, best of 20 parses.
    static func parse() throws(BenchFailure) -> BenchRow {
        let row = "feed-parse"
        let document = rssDocument(items: itemCount)
        let bytes = Array(document.utf8)
        let url = "https://news.example/feed.xml"
        var items = 0
        var best = Double.infinity
        for _ in 0..<rounds {
            var failure: ServiceError?
            let elapsed = MonotonicClock.time {
                do throws(ServiceError) {
                    items = try FeedParser.parse(bytes, url: url).items.count
                } catch {
                    failure = error
                }
            }
            if let failure { throw BenchFailure(row: row, reason: "the document did not parse: \(failure)") }
            best = min(best, elapsed / 1e9)
        }
        guard items == itemCount else { throw BenchFailure(row: row, reason: "parsed \(items) items of \(itemCount)") }
        let folder = try BenchFolder(row: row)
        try folder.write("feed.xml", document, row: row)
        try folder.write("baseline.py", pythonScript, row: row)
        let python = try runPython(row: row, folder: folder)
        guard python.items == itemCount else {
            throw BenchFailure(row: row, reason: "the python3 baseline found \(python.items) items of \(itemCount)")
        }
        return BenchRow(
            name: row, value: Double(itemCount) / best, baseline: Double(itemCount) / python.seconds, unit: "items/s",
            goal: .ratioAtLeast(1),
            note: "a \(bytes.count / 1000) KB RSS 2.0 document of \(itemCount) items (entities in titles, CDATA HTML descriptions, "
                + "RFC 822 dates) to items with plain-text titles and summaries, resolved links and epoch dates, best of \(rounds); "
                + "baseline CPython's xml.etree.ElementTree with email.utils dates and html.unescape, best of \(rounds)"
        )
    }

    /// An RSS document with `items` items, shaped like a news site's feed.
    static func rssDocument(items: Int) -> String {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
            <channel>
            <title>Bench News &amp; Views</title>
            <link>https://news.example/</link>
            <description>Every story</description>

            """
        for number in 0..<items {
            let day = 1 + number % 28, month = months[number % 12], hour = number % 24, minute = number % 60
            text += """
                <item>
                <title>Story \(number): markets &amp; politics &#8212; what&#8217;s next</title>
                <link>/stories/\(number).html</link>
                <guid isPermaLink="false">story-\(number)</guid>
                <pubDate>Mon, \(day < 10 ? "0" : "")\(day) \(month) 2024 \(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute):00 +0000</pubDate>
                <dc:creator>Reporter \(number % 17)</dc:creator>
                <description><![CDATA[<p>The <b>first</b> paragraph of story \(number), with a <a href="/x">link</a> &amp; an entity.</p>
                <p>A second paragraph that goes on for a while, as summaries do, to give the parser some text to carry: \
                lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.</p>]]></description>
                </item>

                """
        }
        return text + "</channel>\n</rss>\n"
    }

    static let pythonScript = #"""
        import sys, time, re, html
        import xml.etree.ElementTree as ET
        from email.utils import parsedate_to_datetime
        from urllib.parse import urljoin

        TAGS = re.compile(r"<[^>]*>")
        SPACE = re.compile(r"\s+")

        def text(markup):
            return SPACE.sub(" ", html.unescape(TAGS.sub(" ", markup or ""))).strip()

        def parse(data, url):
            root = ET.fromstring(data)
            items = []
            for item in root.iter("item"):
                date = item.findtext("pubDate")
                items.append({
                    "id": item.findtext("guid") or item.findtext("link"),
                    "title": text(item.findtext("title")),
                    "link": urljoin(url, (item.findtext("link") or "").strip()),
                    "published": parsedate_to_datetime(date).timestamp() if date else None,
                    "summary": text(item.findtext("description")),
                })
            return items

        data = open(sys.argv[1], "rb").read()
        best, count = float("inf"), 0
        for _ in range(\#(rounds)):
            started = time.perf_counter()
            count = len(parse(data, "https://news.example/feed.xml"))
            best = min(best, time.perf_counter() - started)
        with open(sys.argv[2], "w") as out:
            out.write("%r %d\n" % (best, count))
        """#

    private static func runPython(row: String, folder: BenchFolder) throws(BenchFailure) -> (seconds: Double, items: Int) {
        let status = try folder.runBaseline(["feed.xml", "result.txt"], row: row)
        guard status == 0, let result = try? String(contentsOfFile: folder.path + "/result.txt", encoding: .utf8) else {
            throw BenchFailure(row: row, reason: "the python3 baseline failed with status \(status)")
        }
        let fields = result.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let seconds = Double(fields[0]), let items = Int(fields[1]) else {
            throw BenchFailure(row: row, reason: "the python3 baseline wrote no timing")
        }
        return (seconds, items)
    }
}
