import Foundation
import Model

/// Reads a JSON Feed (version 1 or 1.1: https://jsonfeed.org/version/1.1) into a ``ParsedFeed``.
///
/// An item's link is `url` (else `external_url`), resolved against the feed's URL; its summary
/// is `summary`, else `content_text`, else `content_html` as text; its date `date_published`,
/// else `date_modified`. Ids may be strings or (as version 1 allowed) numbers.
enum JSONFeedReader {
    static func parse(_ bytes: [UInt8], url: String) throws(ServiceError) -> ParsedFeed {
        guard let document = try? Value(jsonBytes: bytes) else {
            throw ServiceError(.invalidData, "not RSS, Atom or JSON Feed: the document starts with '{' but is not valid JSON")
        }
        guard let version = document["version"].stringValue, version.hasPrefix("https://jsonfeed.org/version/")
                || version.hasPrefix("http://jsonfeed.org/version/") else {
            throw ServiceError(.invalidData, "not RSS, Atom or JSON Feed: a JSON document without \"version\": \"https://jsonfeed.org/version/1.1\"")
        }
        guard let entries = document["items"].arrayValue else {
            throw ServiceError(.invalidData, "malformed JSON Feed: \"items\" must be an array, got \(document["items"].typeName)")
        }
        let base = URL(string: url)
        let drafts = entries.map { entry in
            var draft = FeedEntryDraft()
            switch entry["id"] {
            case .string(let id): draft.id = id
            case .integer(let id): draft.id = String(id)
            case .number(let id): draft.id = String(id)
            default: break
            }
            draft.title = entry["title"].stringValue
            draft.titleIsHTML = false
            draft.link = (entry["url"].stringValue ?? entry["external_url"].stringValue).map { FeedEntryDraft.resolve($0, against: base) }
            draft.published = entry["date_published"].stringValue
            draft.updated = entry["date_modified"].stringValue
            if let summary = entry["summary"].stringValue {
                draft.summary = summary
                draft.summaryIsHTML = false
            }
            if let text = entry["content_text"].stringValue {
                draft.content = text
                draft.contentIsHTML = false
            } else {
                draft.content = entry["content_html"].stringValue
            }
            return draft
        }
        let title = HTMLText.collapsingWhitespace(HTMLText.decodingEntities(document["title"].stringValue ?? ""))
        let homePage = document["home_page_url"].stringValue.map { FeedEntryDraft.resolve($0, against: base) }.flatMap { $0.isEmpty ? nil : $0 }
        return ParsedFeed(title: title, homePage: homePage, items: drafts.items(feed: url, feedTitle: title), format: "json")
    }
}
