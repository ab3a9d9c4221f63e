import Model

/// One column of a `view.table`: which field it shows, its title and alignment.
struct TableColumn {
    let key: String
    let title: String
    var alignRight: Bool
    /// A fixed width in columns, or nil to fit the content.
    let width: Int?

    /// A column from `"name"` or `{ key = "name", title = "Name", align = "right", width = 10 }`.
    init?(_ value: Value) {
        if let key = value.stringValue {
            self.key = key
            title = key
            alignRight = false
            width = nil
            return
        }
        guard let key = value["key"].stringValue else { return nil }
        self.key = key
        title = value["title"].stringValue ?? key
        alignRight = value["align"].stringValue == "right"
        width = value["width"].integerValue.map { max(Int($0), 1) }
    }
}
