import Model
@testable import Services
import Testing

/// The feed parser on documents written here: RSS, Atom and JSON Feed, what real feeds get
/// wrong, and documents that are not feeds at all.
@Suite struct FeedParserTests {
    static let feedURL = "http://news.example/blog/feed.xml"

    static func parse(_ text: String, url: String = feedURL) throws -> ParsedFeed {
        try FeedParser.parse(Array(text.utf8), url: url)
    }

    /// The error a document fails with.
    static func failure(_ text: String) -> ServiceError? {
        do {
            _ = try FeedParser.parse(Array(text.utf8), url: feedURL)
            return nil
        } catch {
            return error
        }
    }

    @Test func rssItemsWithCDATAEntitiesDatesAndRelativeLinks() throws {
        let feed = try Self.parse("""
            \u{FEFF}
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:atom="http://www.w3.org/2005/Atom">
            <channel>
              <title>Caf&eacute; &amp; Co</title>
              <link>/blog/</link>
              <atom:link href="http://news.example/blog/feed.xml" rel="self" type="application/rss+xml"/>
              <image><title>Logo</title><link>/logo</link></image>
              <item>
                <title><![CDATA[Fish & chips: <b>now</b> &amp; then]]></title>
                <link>posts/1.html</link>
                <guid isPermaLink="false">post-1</guid>
                <pubDate>Sat, 15 Jun 2024 12:00:00 GMT</pubDate>
                <description><![CDATA[<p>First&nbsp;paragraph.</p><p>Second &#x2014; and&#8230;</p><script>alert(1)</script>]]></description>
              </item>
              <item>
                <title>Caf&#233; AT&T&nbsp;news</title>
                <guid>http://news.example/blog/posts/2.html</guid>
                <pubDate>15 Jun 24 14:30 EST</pubDate>
                <content:encoded>&lt;p&gt;Only content&lt;/p&gt;</content:encoded>
              </item>
              <item>
                <title>No date, no id</title>
                <link>http://other.example/x?a=1&amp;b=2</link>
              </item>
            </channel>
            </rss>
            """)
        #expect(feed.format == "rss")
        #expect(feed.title == "Café & Co")
        #expect(feed.homePage == "http://news.example/blog/", "the channel's link, not atom:link or the image's")
        #expect(feed.items.count == 3)
        let first = feed.items[0]
        #expect(first.id == "post-1")
        #expect(first.title == "Fish & chips: now & then", "CDATA title: tags dropped, entities decoded")
        #expect(first.link == "http://news.example/blog/posts/1.html")
        #expect(first.published == 1_718_452_800)
        #expect(first.summary == "First paragraph. Second \u{2014} and\u{2026}", "tags and script dropped, entities decoded, no-break spaces folded")
        #expect(first.feed == Self.feedURL && first.feedTitle == "Café & Co")
        let second = feed.items[1]
        #expect(second.id == "http://news.example/blog/posts/2.html")
        #expect(second.link == "http://news.example/blog/posts/2.html", "a permalink guid is the link")
        #expect(second.title == "Café AT&T news", "a bare & and an HTML entity in XML are tolerated")
        let halfPastSevenUTC: Double = 1_718_452_800 + 7.5 * 3600
        #expect(second.published == halfPastSevenUTC, "2-digit year, no weekday, no seconds, EST")
        #expect(second.summary == "Only content", "content:encoded when there is no description")
        let third = feed.items[2]
        #expect(third.id == "http://other.example/x?a=1&b=2", "no guid: the link is the id")
        #expect(third.published == nil)
    }

    @Test func duplicateGuidsKeepTheFirstAndIdlessItemsGetStableIDs() throws {
        let document = """
            <rss version="2.0"><channel><title>T</title>
            <item><title>One</title><guid>same</guid></item>
            <item><title>Two</title><guid>same</guid></item>
            <item><title>Three</title><description>no link</description></item>
            <item></item>
            </channel></rss>
            """
        let feed = try Self.parse(document)
        #expect(feed.items.map(\.title) == ["One", "Three"], "the duplicate and the empty item are dropped")
        let derived = feed.items[1].id
        #expect(derived.hasPrefix("hash:") && derived.count == 21)
        #expect(try Self.parse(document).items[1].id == derived, "the same entry gets the same id each time")
        #expect(FeedEntryDraft.hashID(title: "Three", summary: "other") != derived)
    }

    @Test func atomWithXMLBaseHTMLAndXHTMLContent() throws {
        let feed = try Self.parse("""
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://atom.example/root/">
              <title type="text">Atom &lt;Notes&gt;</title>
              <link rel="self" href="/feed.atom"/>
              <link href="home/"/>
              <entry xml:base="entries/">
                <title type="html">&lt;em&gt;Tom&amp;amp;Jerry&lt;/em&gt;</title>
                <link rel="edit" href="edit/1"/>
                <link rel="alternate" type="text/html" href="one.html"/>
                <id>tag:atom.example,2024:1</id>
                <updated>2024-06-15T12:00:00Z</updated>
                <published>2024-06-15T10:00:00.250+02:00</published>
                <summary type="html">&lt;p&gt;Hello &amp;amp; welcome&lt;/p&gt;</summary>
              </entry>
              <entry>
                <title>Second</title>
                <link href="http://elsewhere.example/2"/>
                <id>tag:atom.example,2024:2</id>
                <updated>2024-06-16T08:00:00</updated>
                <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Rich</p><p>text</p></div></content>
              </entry>
            </feed>
            """)
        #expect(feed.format == "atom")
        #expect(feed.title == "Atom <Notes>")
        #expect(feed.homePage == "http://atom.example/root/home/")
        #expect(feed.items.map(\.id) == ["tag:atom.example,2024:1", "tag:atom.example,2024:2"])
        #expect(feed.items[0].title == "Tom&Jerry", "html title: tags dropped, entities decoded twice over")
        #expect(feed.items[0].link == "http://atom.example/root/entries/one.html", "the alternate link, against both xml:base")
        #expect(feed.items[0].published == 1_718_438_400.25, "published wins over updated; fraction and offset")
        #expect(feed.items[0].summary == "Hello & welcome")
        #expect(feed.items[1].published == 1_718_524_800, "no zone is UTC")
        #expect(feed.items[1].summary == "Rich text")
    }

    @Test func jsonFeed() throws {
        let feed = try Self.parse("""
            {"version": "https://jsonfeed.org/version/1.1", "title": "JSON &amp; more", "home_page_url": "/",
             "items": [
               {"id": "1", "url": "/posts/1", "title": "Hello", "content_html": "<p>Hi &amp; bye</p>",
                "date_published": "2024-06-15T12:00:00Z"},
               {"id": 2, "external_url": "https://x.example/2", "content_text": "Plain <not a tag>",
                "summary": "The summary", "date_modified": "2024-06-15T12:00"},
               {"id": "1", "title": "duplicate"},
               {"title": "No id", "url": "http://news.example/3"}
             ]}
            """, url: "http://json.example/feed.json")
        #expect(feed.format == "json")
        #expect(feed.title == "JSON & more")
        #expect(feed.homePage == "http://json.example/")
        #expect(feed.items.map(\.id) == ["1", "2", "http://news.example/3"])
        #expect(feed.items[0].link == "http://json.example/posts/1")
        #expect(feed.items[0].summary == "Hi & bye")
        #expect(feed.items[0].published == 1_718_452_800)
        #expect(feed.items[1].summary == "The summary")
        #expect(feed.items[1].link == "https://x.example/2")
        #expect(feed.items[1].published == 1_718_452_800, "date_modified without seconds or zone")
    }

    @Test func rdfItemsAreRead() throws {
        let feed = try Self.parse("""
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
                     xmlns:dc="http://purl.org/dc/elements/1.1/">
              <channel><title>RDF</title><link>http://rdf.example/</link></channel>
              <item><title>A</title><link>http://rdf.example/a</link><dc:date>2024-06-15T12:00:00Z</dc:date></item>
            </rdf:RDF>
            """)
        #expect(feed.format == "rdf" && feed.title == "RDF")
        #expect(feed.items.map(\.link) == ["http://rdf.example/a"])
        #expect(feed.items[0].published == 1_718_452_800)
    }

    /// Entities a document declares itself are never expanded (nor are external ones loaded):
    /// feeds have no use for them, and nested ones can blow up ("billion laughs").
    @Test func declaredEntitiesStayAsWritten() throws {
        let feed = try Self.parse("""
            <?xml version="1.0"?>
            <!DOCTYPE rss [
              <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
              <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
              <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
              <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
              <!ENTITY file SYSTEM "file:///etc/passwd">
            ]>
            <rss version="2.0"><channel><title>&d;</title><item><title>&file;</title><guid>1</guid></item></channel></rss>
            """)
        #expect(feed.title == "&d;")
        #expect(feed.items.map(\.title) == ["&file;"])
    }

    @Test func documentsThatAreNotFeedsFailWithInvalidData() {
        let cases: [(String, String)] = [
            ("<!DOCTYPE html><html><head><title>x</title></head><body>hi</body></html>",
             "not RSS, Atom or JSON Feed: root element <html>"),
            ("<!DOCTYPE html>\n<html lang=en><body>unquoted</body></html>", "not RSS, Atom or JSON Feed: root element <html>"),
            ("<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "not RSS, Atom or JSON Feed: root element <svg>"),
            ("", "not RSS, Atom or JSON Feed: the document is empty"),
            ("\u{FEFF}  \n", "not RSS, Atom or JSON Feed: the document is empty"),
            ("Hello, world", "not RSS, Atom or JSON Feed: the document starts with \"Hello, world…\""),
            ("{\"a\": 1}", "not RSS, Atom or JSON Feed: a JSON document without \"version\": \"https://jsonfeed.org/version/1.1\""),
            ("{\"version\": ", "not RSS, Atom or JSON Feed: the document starts with '{' but is not valid JSON"),
            ("{\"version\": \"https://jsonfeed.org/version/1.1\", \"items\": {}}", "malformed JSON Feed: \"items\" must be an array, got table"),
            ("<rss><channel><item><title>x</channel></rss>",
             "malformed XML at line 1, column 39: the end tag </channel> does not match <title>"),
            ("<rss><channel><item>", "malformed XML at line 1, column 21: the document ends before <item> is closed"),
        ]
        for (document, message) in cases {
            let error = Self.failure(document)
            #expect(error?.code == .invalidData, "\(document)")
            #expect(error?.message == message, "\(document)")
        }
    }
    @Test func htmlFeedTitlesLoseTheirTagsAsEntryTitlesDo() throws {
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title type="html">Feed &lt;b&gt;T&lt;/b&gt; &amp;amp; co</title>
            <entry><id>1</id><title type="html">A &lt;b&gt;bold&lt;/b&gt;</title></entry></feed>
            """
        let parsed = try FeedParser.parse(Array(atom.utf8), url: "http://feeds.example/atom")
        #expect(parsed.title == "Feed T & co")
        let plain = "<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>Feed &lt;b&gt;T&lt;/b&gt;</title></feed>"
        #expect(try FeedParser.parse(Array(plain.utf8), url: "http://feeds.example/atom").title == "Feed <b>T</b>",
                "a text title is shown as written")
        let rss = "<rss version=\"2.0\"><channel><title>&lt;i&gt;News&lt;/i&gt;</title><item><title>x</title></item></channel></rss>"
        #expect(try FeedParser.parse(Array(rss.utf8), url: "http://feeds.example/rss").title == "News")
    }
}
