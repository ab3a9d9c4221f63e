/// A table while a TOML document is read. TOML lets a table be made in one way only, once: by a
/// header (`[a.b]`), by dotted keys (`a.b.c = 1`), inline (`{ c = 1 }`) or, on the way to
/// another, implicitly (`a` of `[a.b]`, which a later `[a]` may still define). What made it
/// decides what may add to it later, so it is kept with each table.
///
/// Values are kept apart from the tables still open to additions, in the record the reader
/// returns: a table of values only (most of a manifest or config file) is handed over as it is.
struct TOMLTable {
    enum Origin {
        /// Made on the way to a header's table; a header may still define it.
        case implicit
        /// Defined by a header (`[a]`, or an element of `[[a]]`).
        case header
        /// Made by dotted keys or inline: only keys of the same expression or section add to it.
        case dotted
    }

    /// A key's table, which later lines may add to.
    enum Child {
        case table(TOMLTable)
        /// An array of tables (`[[a]]`): headers add to its last element.
        case tables([TOMLTable])
    }

    /// What a document may not do to its tables, said without the line (the reader adds it).
    struct Problem: Error {
        let message: String
    }

    /// The keys a table of a config file or manifest usually holds at most.
    static let expectedKeys = 12

    var origin: Origin
    /// The keys holding values, arrays and inline tables included: nothing adds to them later.
    var values: Fields = [:]
    /// The keys holding tables and arrays of tables; never a key of `values`.
    var children: [String: Child] = [:]

    /// The table's keys and values (objects of objects, arrays of objects).
    var fields: Fields {
        guard !children.isEmpty else { return values }
        var fields = values
        for (key, child) in children {
            switch child {
            case .table(let table):
                fields[key] = .object(table.fields)
            case .tables(let tables):
                var elements: [Value] = []
                elements.reserveCapacity(tables.count)
                for table in tables { elements.append(.object(table.fields)) }
                fields[key] = .array(elements)
            }
        }
        return fields
    }

    // MARK: Headers

    /// `[path]`: defines the table at `path`, making the tables on the way.
    mutating func defineTable(at path: [String]) throws(Problem) {
        try withParent(of: path) { parent, key throws(Problem) in
            guard parent.values[key] == nil else { throw Problem(message: "'\(Self.dotted(path))' is a value already, not a table") }
            switch parent.children[key] {
            case nil:
                parent.children[key] = .table(TOMLTable(origin: .header))
            case .table(var table) where table.origin == .implicit:
                table.origin = .header
                parent.children[key] = .table(table)
            case .table(let table):
                throw Problem(message: table.origin == .header ? "the table [\(Self.dotted(path))] is defined twice"
                              : "the table [\(Self.dotted(path))] was made by dotted keys already and cannot get a header")
            case .tables:
                throw Problem(message: "[\(Self.dotted(path))] is an array of tables ([[\(Self.dotted(path))]]), not a table")
            }
        }
    }

    /// `[[path]]`: adds a table to the array of tables at `path`, making it when new.
    mutating func appendTable(at path: [String]) throws(Problem) {
        try withParent(of: path) { parent, key throws(Problem) in
            let defined = "'\(Self.dotted(path))' is defined already, not as an array of tables ([[\(Self.dotted(path))]])"
            guard parent.values[key] == nil else { throw Problem(message: defined) }
            switch parent.children[key] {
            case nil:
                parent.children[key] = .tables([TOMLTable(origin: .header)])
            case .tables(var tables):
                parent.children[key] = nil                      // no copy while it grows
                tables.append(TOMLTable(origin: .header))
                parent.children[key] = .tables(tables)
            case .table:
                throw Problem(message: defined)
            }
        }
    }

    /// Runs `body` on the table at `path` (the last element of an array of tables on the way),
    /// making missing tables as `implicit`.
    mutating func withTable(at path: ArraySlice<String>, _ body: (inout TOMLTable) throws(Problem) -> Void) throws(Problem) {
        guard let key = path.first else { return try body(&self) }
        let rest = path.dropFirst()
        guard let index = children.index(forKey: key) else {
            guard values[key] == nil else { throw Problem(message: "'\(key)' is a value already, not a table") }
            var table = TOMLTable(origin: .implicit)
            try table.withTable(at: rest, body)
            children[key] = .table(table)
            return
        }
        // A table changes after its slot is emptied (so its storage is not copied) and goes back
        // to the same slot: the key is hashed once.
        switch children.values[index] {
        case .table(var table):
            children.values[index] = .tables([])
            defer { children.values[index] = .table(table) }
            try table.withTable(at: rest, body)
        case .tables(var tables):
            children.values[index] = .tables([])
            defer { children.values[index] = .tables(tables) }
            // Never empty: an array of tables is made with its first element.
            try tables[tables.count - 1].withTable(at: rest, body)
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
            // Room for a section's keys at once: grown one key at a time, their storage would be
            // made anew at the 2nd, 4th and 7th key.
            if values.isEmpty { values = Fields(minimumCapacity: Self.expectedKeys) }
            // One search: a key given twice replaces the first value, but the document is refused.
            guard children.isEmpty || children[key] == nil, values.updateValue(value, forKey: key) == nil else {
                throw Problem(message: "the key '\(Self.dotted(whole))' is defined twice")
            }
            return
        }
        let prefix = { Self.dotted(whole.prefix(whole.count - rest.count)) }
        guard let index = children.index(forKey: key) else {
            guard values[key] == nil else { throw Problem(message: "'\(prefix())' is a value already, not a table") }
            var table = TOMLTable(origin: .dotted)
            try table.insert(value, at: rest, whole: whole)
            children[key] = .table(table)
            return
        }
        switch children.values[index] {
        case .table(var table) where table.origin == .dotted:
            children.values[index] = .tables([])
            defer { children.values[index] = .table(table) }
            try table.insert(value, at: rest, whole: whole)
        case .table, .tables:
            throw Problem(message: "'\(prefix())' is a table defined elsewhere: "
                          + "a dotted key cannot add to it (put the key under its header)")
        }
    }

    /// A key as written in a document, parts quoted when they need it.
    static func dotted(_ path: some Collection<String>) -> String {
        path.map { part in
            part.isEmpty || !part.unicodeScalars.allSatisfy(TOMLReader.isBareKey) ? "\"" + part + "\"" : part
        }.joined(separator: ".")
    }
}
