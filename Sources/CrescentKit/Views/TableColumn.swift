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
}
