import Model

extension StoreCollection {
    /// What scripts see of a collection: `name`, `count`, `items`, the record methods and
    /// `didChange`.
    ///
    /// ```lua
    /// local todo = services.store:collection("todo")
    /// todo:on("didChange", function(change) print(#change.inserted, "added") end)
    /// task(function()
    ///   local item = todo:add({ title = "write the docs", done = false })
    ///   todo:update(item.id, { done = true })
    ///   print(todo.count, todo:find({ done = true })[1].title)
    /// end)
    /// ```
    ///
    /// `get` and `page` read the list in memory and answer on the loop (the completion still
    /// runs on a later turn); `find` runs in a Swift task, off the loop. The writes answer
    /// through a reply: a small one runs right on the loop when nothing can make it wait, the
    /// others on the store's writer queue (see ``StoreDatabase`` and `[store] write_on_loop`).
    static let declaration = Interface<StoreCollection>(name: "collection", summary: "Records kept in the store's database, in insertion order.") { d in
        declareProperties(&d)
        d.method("add", [.init("records", .oneOf([record, .array(of: record)]),
                               "A record { field = value, ... } or an array of records ({} is an empty array: nothing is added).")],
                 returns: "the stored record with its id (an array of them for an array)",
                 "Stores records in one transaction; each gets a new integer id (a given id is replaced).",
                 replying: { collection, arguments, reply in collection.add(arguments[0], reply: reply) })
        d.method("update", [.init("id", .integer, "The record's id."), .init("fields", .table, "The fields to set; the others stay.")],
                 returns: "the updated record", "Sets fields of one record (not_found for an unknown id).",
                 replying: { collection, arguments, reply in
                     collection.update(arguments[0].integerValue ?? 0, fields: arguments[1], reply: reply)
                 })
        d.method("remove", [.init("ids", .oneOf([.integer, .array(of: .integer)]), "An id or an array of ids.")],
                 returns: "how many records were removed",
                 "Removes records in one transaction; with an unknown id nothing is removed (not_found).",
                 replying: { collection, arguments, reply in collection.remove(arguments[0], reply: reply) })
        d.method("clear", [], returns: "how many records were removed", "Removes every record.",
                 replying: { collection, _, reply in collection.clear(reply: reply) })
        declareReads(&d)
        d.event("didChange", payload: "change set {inserted, deleted, updated, reload, insertedItems, updatedItems}",
                "The records changed (here or in another process); positions are 1-based in items: deleted ones before the change, the others after; insertedItems and updatedItems hold the records at inserted and updated.")
    }.erased

    /// What `add` takes: one record or an array of them. Naming the record type lets messages
    /// about a bad part name it `record.tags[3]` (and `records[2].tags[3]` in an array).
    private static let record = ArgumentType.record("record", fields: [])

    private static func declareProperties(_ d: inout Interface<StoreCollection>) {
        d.property("name", type: "string", "The collection's name.") { .string($0.name) }
        d.property("count", type: "integer", "How many records there are.") { .integer(Int64($0.count)) }
        d.property("items", type: "array of records",
                   "Every record, in insertion order (a snapshot: for large collections use page()).") { .array($0.items) }
    }

    private static func declareReads(_ d: inout Interface<StoreCollection>) {
        d.method("get", [.init("id", .integer, "The record's id.")], returns: "the record",
                 "The record with this id (not_found when there is none).", immediate: { collection, arguments throws(ServiceError) in
                     try collection.get(arguments[0].integerValue ?? 0)
                 })
        d.method("page", [.init("offset", .integer, "How many records to skip (0 for the first page)."),
                          .init("limit", .integer, "At most how many records.")],
                 returns: "an array of records", "Records offset+1 ... offset+limit, in insertion order.",
                 immediate: { collection, arguments throws(ServiceError) in
                     .array(try collection.page(offset: arguments[0].integerValue ?? 0, limit: arguments[1].integerValue ?? 0))
                 })
        d.method("find", [.init("query", .table, "Fields the records must equal: { done = false }; {} for all."),
                          .init("options", .table, "{ limit = n, offset = n, order = \"field\" or \"-field\" }", optional: true,
                                options: RecordQuery.options)],
                 returns: "an array of records",
                 "Records whose fields equal the query's (numbers by value, tables field by field), in insertion order or by options.order.") { collection, arguments async throws(ServiceError) in
            try await StoreWork.run { () throws(ServiceError) in .array(try collection.find(arguments[0], options: arguments[1])) }
        }
    }
}
