import Model

/// One column of a `view.table`: which field it shows, its title and alignment.
struct TableColumn {
    let key: String
    let title: String
    /// `align` as given: true for right, false for left, nil to decide from the content.
    let explicitRight: Bool?
    /// The alignment in use: the explicit one, else right for all-number columns.
    var alignRight: Bool
    /// A fixed width in columns, or nil to fit the content.
    let width: Int?

    /// A column from `"name"` or `{ key = "name", title = "Name", align = "right", width = 10 }`.
    init?(_ value: Value) {
        if let key = value.stringValue {
            self.key = key
            title = key
            explicitRight = nil
            alignRight = false
            width = nil
            return
        }
        guard let key = value["key"].stringValue else { return nil }
        self.key = key
        title = value["title"].stringValue ?? key
        explicitRight = value["align"].stringValue.map { $0 == "right" }
        alignRight = explicitRight ?? false
        width = value["width"].integerValue.map { max(Int($0), 1) }
    }

    /// The fields a column's table may have.
    static let fields = ["key", "title", "align", "width"]

    /// Why `value` (the column at `position`, from 1) is no column, nil when it is one: a name,
    /// or a table with a string `key` and only ``fields`` (a misspelled `algn` was ignored and
    /// `align = "rigth"` aligned left, without a word).
    static func problem(_ value: Value, at position: Int) -> String? {
        if value.stringValue != nil { return nil }
        let place = "view.table: column \(position)"
        guard case .object(let given) = value else {
            return "\(place) must be a name (\"qty\") or a table { key = \"qty\", title, align, width }, got \(value.typeName)"
        }
        if let unknown = given.keys.sorted().first(where: { !fields.contains($0) }) {
            let listing = NameSuggestion.listing("fields", fields, suggesting: NameSuggestion.closest(to: unknown, among: fields))
            return "\(place): no field '\(unknown)' (\(listing))"
        }
        guard value["key"].stringValue != nil else {
            return "\(place) has no key: give the row field it shows (key = \"qty\")"
        }
        if !value["title"].isNull, value["title"].stringValue == nil {
            return "\(place): title must be a string, got \(value["title"].typeName)"
        }
        let align = value["align"]
        if !align.isNull, align.stringValue != "left", align.stringValue != "right" {
            let written = align.stringValue
            let closest = written.flatMap { NameSuggestion.closest(to: $0, among: ["left", "right"]) }
            return "\(place): align must be \"left\" or \"right\", got \(written.map { "\"\($0)\"" } ?? align.typeName)"
                + (closest.map { "; did you mean '\($0)'?" } ?? "")
        }
        let width = value["width"]
        if !width.isNull, (width.integerValue ?? 0) < 1 {
            return "\(place): width must be a whole number of columns above 0, got \(width.jsonText)"
        }
        return nil
    }
}

/// A table's title line and rule as last laid out, with the titles, alignments, widths and
/// indent they were laid out from (``ViewNode/tableLines(width:limit:)`` reuses them while
/// those hold).
struct TableHeader {
    let titles: [String]
    let alignments: [Bool]
    let widths: [Int]
    let indent: String
    let lines: [String]
}
