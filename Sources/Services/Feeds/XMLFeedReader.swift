import Foundation
import Model

/// Reads an RSS 2.0 (and 0.9x), RSS 1.0 (RDF) or Atom 1.0 (and 0.3) document with
/// ``XMLReader`` into entry drafts.
///
/// It follows namespaces, so `atom:link` in an RSS channel is not the channel's `link`, and keeps
/// a stack of `xml:base` values so relative links resolve where they were written. Text of the
/// fields it reads (and of their child elements, for Atom's XHTML content) is gathered whole,
/// CDATA included; text elsewhere is skipped unread.
struct XMLFeedReader {
    private enum Namespace {
        static let atom = "http://www.w3.org/2005/Atom"
        static let atom03 = "http://purl.org/atom/ns#"
        static let rss10 = "http://purl.org/rss/1.0/"
        static let rss090 = "http://my.netscape.com/rdf/simple/0.9/"
        static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        static let dublinCore = "http://purl.org/dc/elements/1.1/"
        static let content = "http://purl.org/rss/1.0/modules/content/"
    }

    /// The field whose text is being gathered, and the depth of its element.
    private enum Field {
        case feedTitle, feedLink
        case id, title, link, published, updated, summary, content
    }

    /// `rss`, `rdf` or `atom` once the root element says so.
    private(set) var format: String?
    /// The root element's name as written, once read.
    private(set) var rootName: String?
    private(set) var title = ""
    private(set) var homePage: String?
    private(set) var drafts: [FeedEntryDraft] = []

    private var depth = 0
    private var bases: [URL?]
    private var entry: FeedEntryDraft?
    private var entryDepth = 0
    private var capture: (field: Field, depth: Int)?
    private var text = ""
    private var sawFeedTitle = false
    /// The namespace of an Atom document's root `<feed>`: Atom 1.0's, 0.3's, none, or one of
    /// the drafts' (`http://purl.org/pie/`, `http://example.com/newformat#`) or another feeds
    /// were published with. Elements in it are Atom's.
    private var atomNamespace: String?

    init(url: String) {
        bases = [URL(string: url)]
    }

    /// Reads the document `xml` reads, until its root element closes or turns out not to be a
    /// feed's (then ``format`` stays nil).
    ///
    /// - Throws: `invalid_data` for a malformed document (the drafts read before stay).
    mutating func read(_ xml: inout XMLReader) throws(ServiceError) {
        xml.collectsText = false
        while let event = try xml.next() {
            switch event {
            case .start(let element):
                guard start(element) else { return }
            case .end:
                end()
            case .text(let chunk):
                text += chunk
            }
            xml.collectsText = capture != nil
        }
    }

    // MARK: Elements

    /// Takes in a start tag; false when the root element is not a feed's.
    private mutating func start(_ element: XMLElement) -> Bool {
        depth += 1
        let base = bases.last ?? nil
        bases.append(element.attribute("base", namespace: XMLNamespaceScope.xml).flatMap { URL(string: $0, relativeTo: base)?.absoluteURL } ?? base)
        let name = element.name
        let namespace = element.namespace
        if depth == 1 {
            rootName = element.qualifiedName
            switch (name, namespace) {
            case ("rss", _): format = "rss"
            case ("RDF", Namespace.rdf): format = "rdf"
            // Atom 1.0, Atom 0.3, Atom written without its namespace, and the drafts before 0.3
            // (or any other namespace): a <feed> root is read as Atom, its elements by name.
            case ("feed", _):
                format = "atom"
                atomNamespace = namespace
            default: return false
            }
            return true
        }
        if capture != nil {
            // Inside a field (XHTML content): child elements are markup of its text.
            text += " "
            return true
        }
        let isAtom = namespace == Namespace.atom || namespace == Namespace.atom03 || (format == "atom" && namespace == atomNamespace)
        if entry == nil {
            if (name == "item" && !isAtom) || (name == "entry" && isAtom) {
                entry = FeedEntryDraft()
                entryDepth = depth
                // An RSS 1.0 item names itself: its rdf:about is its id (and its link, until
                // a <link> says otherwise).
                if let about = element.attribute("about", namespace: Namespace.rdf) ?? element.attribute("about"), !about.isEmpty {
                    entry?.id = about
                    let link = FeedEntryDraft.resolve(about, against: base)
                    if !link.isEmpty { entry?.link = link }
                }
            } else if depth <= 3, name == "title", !sawFeedTitle,
                      isAtom || namespace.isEmpty || namespace == Namespace.rss10 || namespace == Namespace.rss090
                      || namespace == Namespace.dublinCore {
                // As an entry's title: Atom says whether it is markup, RSS titles may hold some.
                begin(.feedTitle, html: isAtom ? Self.isHTML(element) : true)
            } else if depth <= 3, name == "link", homePage == nil {
                if isAtom {
                    atomLink(element, field: .feedLink)
                } else if namespace.isEmpty || namespace == Namespace.rss10 || namespace == Namespace.rss090 {
                    begin(.feedLink)
                }
            }
            return true
        }
        guard depth == entryDepth + 1 else { return true }
        switch (name, namespace) {
        // RSS titles are meant to be text, but feeds put markup in them (in CDATA or escaped):
        // they are read as HTML, as feed readers do.
        // Dublin Core's title and identifier stand in when the entry has no title or id of its own.
        case ("title", Namespace.dublinCore) where entry?.title != nil: break
        case ("identifier", Namespace.dublinCore) where entry?.id == nil: begin(.id)
        case ("title", _): begin(.title, html: isAtom ? Self.isHTML(element) : true)
        case ("link", _) where isAtom: atomLink(element, field: .link)
        case ("link", ""), ("link", Namespace.rss10), ("link", Namespace.rss090): begin(.link)
        case ("guid", _): begin(.id, permalink: element.attribute("isPermaLink")?.lowercased() != "false")
        case ("id", _) where isAtom: begin(.id)
        case ("pubDate", _), ("published", _), ("issued", _), ("date", Namespace.dublinCore): begin(.published)
        case ("updated", _), ("modified", _): begin(.updated)
        case ("description", _): begin(.summary, html: true)
        case ("summary", _): begin(.summary, html: Self.isHTML(element))
        case ("encoded", Namespace.content): begin(.content, html: true)
        case ("content", _) where isAtom: begin(.content, html: Self.isHTML(element))
        default: break
        }
        return true
    }

    private mutating func end() {
        defer {
            depth -= 1
            bases.removeLast()
        }
        if let (field, fieldDepth) = capture, fieldDepth == depth {
            finish(field)
            capture = nil
        } else if let finished = entry, depth == entryDepth {
            drafts.append(finished)
            entry = nil
        }
    }

    // MARK: Fields

    /// Whether the guid being read is a permalink (RSS's default) and whether the text field
    /// being read is HTML.
    private var guidIsPermalink = false
    private var captureIsHTML = false

    private mutating func begin(_ field: Field, html: Bool = false, permalink: Bool = false) {
        capture = (field, depth)
        text = ""
        captureIsHTML = html
        guidIsPermalink = permalink
    }

    private mutating func finish(_ field: Field) {
        let value = text
        let base = bases.last ?? nil
        switch field {
        case .feedTitle:
            title = captureIsHTML ? HTMLText.plainText(fromHTML: value) : HTMLText.collapsingWhitespace(HTMLText.decodingEntities(value))
            sawFeedTitle = true
        case .feedLink:
            let link = FeedEntryDraft.resolve(value, against: base)
            homePage = link.isEmpty ? nil : link
        case .id:
            entry?.id = value
            // An RSS guid that is a permalink is the link when the item has none.
            if guidIsPermalink, entry?.link == nil, value.contains("://") { entry?.link = FeedEntryDraft.resolve(value, against: base) }
        case .title:
            entry?.title = value
            entry?.titleIsHTML = captureIsHTML
        case .link:
            let link = FeedEntryDraft.resolve(value, against: base)
            if !link.isEmpty { entry?.link = link }
        case .published: entry?.published = value
        case .updated: entry?.updated = value
        case .summary:
            entry?.summary = value
            entry?.summaryIsHTML = captureIsHTML
        case .content:
            entry?.content = value
            entry?.contentIsHTML = captureIsHTML
        }
    }

    /// An Atom `<link rel= href=>`: the first alternate one (no `rel` means alternate).
    private mutating func atomLink(_ element: XMLElement, field: Field) {
        guard let href = element.attribute("href"), (element.attribute("rel") ?? "alternate") == "alternate" else { return }
        let link = FeedEntryDraft.resolve(href, against: bases.last ?? nil)
        guard !link.isEmpty else { return }
        if field == .feedLink {
            homePage = link
        } else if entry?.link == nil {
            entry?.link = link
        }
    }

    /// Atom's `type` attribute: `html` and `xhtml` are markup, `text` (the default) is not.
    /// XHTML is not: its markup arrives as elements, which the reader already turns into word
    /// breaks, so what is left is text, and `&lt;blink&gt;` in it is text too.
    private static func isHTML(_ element: XMLElement) -> Bool {
        let type = element.attribute("type")?.lowercased() ?? "text"
        return type != "xhtml" && type != "application/xhtml+xml" && type.hasSuffix("html")
    }
}
