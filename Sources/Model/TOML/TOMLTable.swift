/// A table while a TOML document is read. TOML lets a table be made in one way only, once: by a
/// header (`[a.b]`), by dotted keys (`a.b.c = 1`), inline (`{ c = 1 }`) or, on the way to
/// another, implicitly (`a` of `[a.b]`, which a later `[a]` may still define). What made it
/// decides what may add to it later, so it is kept with each table.
struct TOMLTable {
    enum Origin {
        /// Made on the way to a header's table; a header may still define it.
        case implicit
        /// Defined by a header (`[a]`, or an element of `[[a]]`).
        case header
        /// Made by dotted keys or inline: only keys of the same expression or section add to it.
        case dotted
    }

    indirect enum Item {
        /// A value, arrays and inline tables included: nothing adds to it later.
        case value(Value)
        case table(TOMLTable)
        /// An array of tables (`[[a]]`): headers add to its last element.
        case tables([TOMLTable])
    }

    /// What a document may not do to its tables, said without the line (the reader adds it).
    struct Problem: Error {
        let message: String
    }

    var origin: Origin
    var items: [String: Item] = [:]

    /// The table as a model value (objects of objects, arrays of objects).
    var value: Value {
        .object(items.mapValues { item in
            switch item {
            case .value(let value): value
            case .table(let table): table.value
            case .tables(let tables): .array(tables.map(\.value))
            }
        })
    }

    // MARK: Headers

    /// `[path]`: defines the table at `path`, making the tables on the way.
    mutating func defineTable(at path: [String]) throws(Problem) {
        try withParent(of: path) { parent, key throws(Problem) in
            switch parent.items[key] {
            case nil:
                parent.items[key] = .table(TOMLTable(origin: .header))
            case .table(var table) where table.origin == .implicit:
                table.origin = .header
                parent.items[key] = .table(table)
            case .table(let table):
                throw Problem(message: table.origin == .header ? "the table [\(Self.dotted(path))] is defined twice"
                              : "the table [\(Self.dotted(path))] was made by dotted keys already and cannot get a header")
            case .tables:
                throw Problem(message: "[\(Self.dotted(path))] is an array of tables ([[\(Self.dotted(path))]]), not a table")
            case .value:
                throw Problem(message: "'\(Self.dotted(path))' is a value already, not a table")
            }
        }
    }

    /// `[[path]]`: adds a table to the array of tables at `path`, making it when new.
    mutating func appendTable(at path: [String]) throws(Problem) {
        try withParent(of: path) { parent, key throws(Problem) in
            switch parent.items[key] {
            case nil:
                parent.items[key] = .tables([TOMLTable(origin: .header)])
            case .tables(var tables):
                tables.append(TOMLTable(origin: .header))
                parent.items[key] = .tables(tables)
            case .table, .value:
                throw Problem(message: "'\(Self.dotted(path))' is defined already, not as an array of tables ([[\(Self.dotted(path))]])")
            }
        }
    }

    /// Runs `body` on the table at `path` (the last element of an array of tables on the way),
    /// making missing tables as `implicit`.
    mutating func withTable(at path: ArraySlice<String>, _ body: (inout TOMLTable) throws(Problem) -> Void) throws(Problem) {
        guard let key = path.first else { return try body(&self) }
        let rest = path.dropFirst()
        switch items[key] {
        case nil:
            var table = TOMLTable(origin: .implicit)
            try table.withTable(at: rest, body)
            items[key] = .table(table)
        case .table(var table):
            items[key] = nil                                    // no copy while it changes
            defer { items[key] = .table(table) }
            try table.withTable(at: rest, body)
        case .tables(var tables):
            items[key] = nil
            defer { items[key] = .tables(tables) }
            // Never empty: an array of tables is made with its first element.
            try tables[tables.count - 1].withTable(at: rest, body)
        case .value:
            throw Problem(message: "'\(key)' is a value already, not a table")
        }
    }

    private mutating func withParent(of path: [String], _ body: (inout TOMLTable, String) throws(Problem) -> Void) throws(Problem) {
        guard let key = path.last else { return }
        try withTable(at: path.dropLast()) { parent throws(Problem) in try body(&parent, key) }
    }

    // MARK: Keys

    /// `path = value` in this table: the tables of a dotted key's parts are made as `dotted`, and
    /// only such tables take more keys that way.
    mutating func insert(_ value: Value, at path: ArraySlice<String>, whole: [String]) throws(Problem) {
        guard let key = path.first else { return }
        let rest = path.dropFirst()
        if rest.isEmpty {
            guard items[key] == nil else { throw Problem(message: "the key '\(Self.dotted(whole))' is defined twice") }
            items[key] = .value(value)
            return
        }
        switch items[key] {
        case nil:
            var table = TOMLTable(origin: .dotted)
            try table.insert(value, at: rest, whole: whole)
            items[key] = .table(table)
        case .table(var table) where table.origin == .dotted:
            items[key] = nil
            defer { items[key] = .table(table) }
            try table.insert(value, at: rest, whole: whole)
        case .table, .tables:
            throw Problem(message: "'\(Self.dotted(whole.prefix(whole.count - rest.count)))' is a table defined elsewhere: "
                          + "a dotted key cannot add to it (put the key under its header)")
        case .value:
            throw Problem(message: "'\(Self.dotted(whole.prefix(whole.count - rest.count)))' is a value already, not a table")
        }
    }

    /// A key as written in a document, parts quoted when they need it.
    static func dotted(_ path: some Collection<String>) -> String {
        path.map { part in
            part.isEmpty || !part.unicodeScalars.allSatisfy(TOMLReader.isBareKey) ? "\"" + part + "\"" : part
        }.joined(separator: ".")
    }
}
