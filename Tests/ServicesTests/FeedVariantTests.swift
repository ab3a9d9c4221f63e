import Model
@testable import Services
import Testing

/// Feeds as publishers really write them: old and namespace-less Atom, RSS 0.90 and 0.91,
/// Dublin Core fallbacks, RSS 1.0 ids from rdf:about, and XHTML titles.
@Suite struct FeedVariantTests {
    @Test func atom03AndAtomWithoutItsNamespace() throws {
        for namespace in [#" xmlns="http://purl.org/atom/ns#""#, ""] {
            let feed = try FeedParserTests.parse("""
                <feed version="0.3"\(namespace)><title>Old</title><link rel="alternate" href="http://a.example/"/>
                <entry><id>urn:a:1</id><title>First</title><link href="http://a.example/1"/><issued>2024-06-15T12:00:00Z</issued></entry>
                </feed>
                """)
            #expect(feed.title == "Old", "\(namespace)")
            #expect(feed.items.map(\.id) == ["urn:a:1"], "\(namespace)")
            #expect(feed.items.first?.link == "http://a.example/1", "\(namespace)")
            #expect(feed.items.first?.title == "First", "\(namespace)")
        }
    }

    /// Feeds written against Atom's drafts (feedparser's test feeds have such): a <feed> in
    /// another namespace is Atom, its elements in that namespace Atom's.
    @Test(arguments: ["http://purl.org/pie/", "http://example.com/newformat#", "http://example.com/necho"])
    func atomInAnOldOrUnknownNamespace(namespace: String) throws {
        let feed = try FeedParserTests.parse("""
            <feed version="0.3" xmlns="\(namespace)"><title>Draft</title>
            <link rel="alternate" href="http://d.example/"/>
            <entry><id>urn:d:1</id><title>First</title><link href="http://d.example/1"/>
            <content type="text/plain">Body</content></entry>
            </feed>
            """)
        #expect(feed.title == "Draft")
        #expect(feed.items.map(\.id) == ["urn:d:1"])
        #expect(feed.items.first?.link == "http://d.example/1")
        #expect(feed.items.first?.title == "First")
        #expect(feed.items.first?.summary == "Body", "the content, as Atom's")
    }

    @Test func rss090And091() throws {
        let old = try FeedParserTests.parse("""
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://my.netscape.com/rdf/simple/0.9/">
            <channel><title>Netscape</title><link>http://n.example/</link></channel>
            <item><title>One</title><link>http://n.example/1</link></item>
            </rdf:RDF>
            """)
        #expect(old.title == "Netscape")
        #expect(old.items.map(\.link) == ["http://n.example/1"])
        let rss091 = try FeedParserTests.parse("""
            <rss version="0.91"><channel><title>Ninety-one</title><item><title>A</title><link>http://r.example/a</link></item></channel></rss>
            """)
        #expect(rss091.title == "Ninety-one")
        #expect(rss091.items.map(\.title) == ["A"])
    }

    @Test func dublinCoreFallbacksAndRdfAbout() throws {
        let feed = try FeedParserTests.parse("""
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
                     xmlns:dc="http://purl.org/dc/elements/1.1/">
            <channel rdf:about="http://d.example/"><dc:title>DC channel</dc:title></channel>
            <item rdf:about="http://d.example/1"><dc:title>DC item</dc:title><dc:date>2024-06-15T12:00:00Z</dc:date></item>
            <item rdf:about="http://d.example/2"><title>Own title</title><dc:title>ignored</dc:title></item>
            </rdf:RDF>
            """)
        #expect(feed.title == "DC channel")
        #expect(feed.items.map(\.id) == ["http://d.example/1", "http://d.example/2"])
        #expect(feed.items.map(\.link) == ["http://d.example/1", "http://d.example/2"])
        #expect(feed.items.map(\.title) == ["DC item", "Own title"])
        #expect(feed.items.first?.published == 1_718_452_800)
    }

    @Test func escapedMarkupInAnXHTMLTitleIsText() throws {
        let feed = try FeedParserTests.parse("""
            <feed xmlns="http://www.w3.org/2005/Atom"><title>X</title>
            <entry><id>1</id><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">&lt;blink&gt; and <b>bold</b></div></title></entry>
            </feed>
            """)
        #expect(feed.items.first?.title == "<blink> and bold")
    }
}
