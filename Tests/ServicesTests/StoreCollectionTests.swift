import Foundation
import Model
@testable import Services
import Testing

/// The collection's records, ids, queries and reports, the same on both backends: a real SQLite
/// file and a database in the test run's PostgreSQL cluster (``StoreBackendTests`` holds
/// reopening and other hosts).
@Suite struct StoreCollectionTests {
    @Test(arguments: StoreBackendKind.allCases)
    func addAssignsIDsAndKeepsInsertionOrder(_ kind: StoreBackendKind) throws {
        let store = try TestDatabase(kind).open()
        defer { store.close() }
        let todo = try store.collection(named: "todo")
        let first = try todo.add(["title": "a", "done": false])
        let more = try todo.add([["title": "b"], ["title": "c", "id": 99]])
        #expect(first["title"] == "a" && first.id > 0)
        let added = try #require(more.arrayValue)
        #expect(added.map(\.id) == [first.id + 1, first.id + 2], "a given id is replaced")
        #expect(todo.items.map { $0["title"] } == ["a", "b", "c"])
        #expect(todo.count == 3)
        #expect(try todo.get(first.id) == first)
        #expect(try todo.add(.array([])) == .array([]), "an empty table is an empty list of records")
    }

    @Test(arguments: StoreBackendKind.allCases)
    func theSameNameIsTheSameObjectAndCollectionsAreSeparate(_ kind: StoreBackendKind) throws {
        let store = try TestDatabase(kind).open()
        defer { store.close() }
        let a = try store.collection(named: "a")
        #expect(try store.collection(named: "a") === a)
        _ = try a.add(["x": 1])
        let b = try store.collection(named: "b")
        #expect(b.count == 0)
        #expect(throws: ServiceError(.invalidArgument, "a collection name must be 1 to 200 bytes long")) {
            try store.collection(named: "")
        }
    }

    /// A NUL would cut a name in SQLite and is refused by PostgreSQL: both backends refuse it
    /// in names and in records alike, before anything is written.
    @Test(arguments: StoreBackendKind.allCases)
    func aNULInANameOrARecordIsRefusedAlike(_ kind: StoreBackendKind) throws {
        let store = try TestDatabase(kind).open()
        defer { store.close() }
        #expect(throws: ServiceError(.invalidArgument, "a collection name must not contain a NUL character (\\0)")) {
            try store.collection(named: "a\u{0}b")
        }
        let list = try store.collection(named: "list")
        #expect(throws: ServiceError(.invalidArgument, "record.note has a string with a NUL character (\\0): records cannot hold it; remove it or encode the text (base64, say)")) {
            try list.add(["note": "a\u{0}b"])
        }
        #expect(throws: ServiceError(.invalidArgument, "record.tags[2] has a string with a NUL character (\\0): records cannot hold it; remove it or encode the text (base64, say)")) {
            try list.add(["tags": ["x", "\u{0}"]])
        }
        #expect(throws: ServiceError(.invalidArgument, "record has a field name with a NUL character (\\0): records cannot hold it; remove it or encode the text (base64, say)")) {
            try list.add(["a\u{0}b": 1])
        }
        let kept = try list.add(["note": "fine"])
        #expect(throws: ServiceError.self) { try list.update(kept.id, fields: ["note": "x\u{0}"]) }
        try store.catchUpWithOtherProcesses()
        #expect(list.items == [kept], "nothing else was written")
    }

    @Test(arguments: StoreBackendKind.allCases)
    func updateMergesFieldsAndUnknownIDsAreNotFound(_ kind: StoreBackendKind) throws {
        let store = try TestDatabase(kind).open()
        defer { store.close() }
        let todo = try store.collection(named: "todo")
        let item = try todo.add(["title": "a", "done": false])
        let updated = try todo.update(item.id, fields: ["done": true, "id": .integer(item.id)])
        #expect(updated == ["title": "a", "done": true, "id": .integer(item.id)])
        #expect(todo.items == [updated])
        #expect(throws: ServiceError(.notFound, "no record with id 12345 in collection 'todo'")) {
            try todo.update(12345, fields: ["done": true])
        }
        #expect(throws: ServiceError(.invalidArgument, "fields.id cannot change (the record's id is \(item.id))")) {
            try todo.update(item.id, fields: ["id": 7])
        }
        let other = try store.collection(named: "other")
        #expect(throws: ServiceError(.notFound, "no record with id \(item.id) in collection 'other'")) {
            try other.update(item.id, fields: ["x": 1])
        }
    }

    @Test(arguments: StoreBackendKind.allCases)
    func removeIsAllOrNothing(_ kind: StoreBackendKind) throws {
        let store = try TestDatabase(kind).open()
        defer { store.close() }
        let list = try store.collection(named: "list")
        let ids = try #require(list.add([["n": 1], ["n": 2], ["n": 3]]).arrayValue).map(\.id)
        #expect(throws: ServiceError(.notFound, "no record with id 999 in collection 'list'")) {
            try list.remove(.array([.integer(ids[0]), 999]))
        }
        #expect(list.count == 3, "nothing removed")
        #expect(try list.remove(.array([.integer(ids[0]), .integer(ids[2]), .integer(ids[0])])) == 2)
        #expect(list.items.map { $0["n"] } == [2])
        #expect(try list.remove(.integer(ids[1])) == 1)
        #expect(try list.clear() == 0)
        #expect(throws: ServiceError(.notFound, "no record with id \(ids[1]) in collection 'list'")) { try list.get(ids[1]) }
    }

    @Test(arguments: StoreBackendKind.allCases)
    func pageSkipsOffsetRecords(_ kind: StoreBackendKind) throws {
        let store = try TestDatabase(kind).open()
        defer { store.close() }
        let numbers = try store.collection(named: "numbers")
        _ = try numbers.add(.array((1...10).map { ["n": .integer($0)] }))
        #expect(try numbers.page(offset: 0, limit: 3).map { $0["n"] } == [1, 2, 3])
        #expect(try numbers.page(offset: 8, limit: 5).map { $0["n"] } == [9, 10])
        #expect(try numbers.page(offset: 20, limit: 5) == [])
        #expect(try numbers.page(offset: 0, limit: Int64.max).count == 10)
        #expect(throws: ServiceError(.invalidArgument, "offset must be >= 0, got -1")) { try numbers.page(offset: -1, limit: 1) }
    }

    @Test(arguments: StoreBackendKind.allCases)
    func findMatchesLikeLuaEqualityAndOrders(_ kind: StoreBackendKind) throws {
        let store = try TestDatabase(kind).open()
        defer { store.close() }
        let people = try store.collection(named: "people")
        _ = try people.add([["name": "cy", "age": 30, "tags": ["a"]], ["name": "al", "age": 41.0],
                            ["name": "bo", "age": 30.0, "tags": ["a"]], ["name": "di"]])
        #expect(try people.find(["age": 30]).map { $0["name"] } == ["cy", "bo"], "30 == 30.0, insertion order")
        #expect(try people.find(["tags": ["a"]]).map { $0["name"] } == ["cy", "bo"])
        #expect(try people.find(.array([]), options: ["order": "name"]).map { $0["name"] } == ["al", "bo", "cy", "di"])
        #expect(try people.find(.array([]), options: ["order": "-age", "limit": 2]).map { $0["name"] } == ["al", "cy"],
                "descending; ties in insertion order")
        #expect(try people.find(.array([]), options: ["order": "age", "offset": 3]).map { $0["name"] } == ["di"],
                "records without the field come last")
        #expect(throws: ServiceError(.invalidArgument, "unknown option 'sort' (options: limit, offset, order)")) {
            try people.find(.array([]), options: ["sort": "name"])
        }
    }

    static let invalidRecords: [(record: Value, message: String)] = [
        (["score": .number(.nan)], "record.score is NaN: JSON has no NaN or infinity; give null, a string or a finite number instead"),
        (["meta": ["x": .number(-.infinity)]], "record.meta.x is -inf: JSON has no NaN or infinity; give null, a string or a finite number instead"),
        (["tags": ["a", "b", .number(.infinity)]], "record.tags[3] is inf: JSON has no NaN or infinity; give null, a string or a finite number instead"),
        (["odd key": ["y": .number(.nan)]], "record[\"odd key\"].y is NaN: JSON has no NaN or infinity; give null, a string or a finite number instead"),
        (.integer(5), "record must be a record (a table with named fields), got a number"),
    ]

    @Test(arguments: StoreBackendKind.allCases, invalidRecords)
    func invalidRecordsNameThePathAndWriteNothing(_ kind: StoreBackendKind, invalid: (record: Value, message: String)) throws {
        let (record, message) = invalid
        let database = try TestDatabase(kind)
        let store = try database.open()
        defer { store.close() }
        let things = try store.collection(named: "things")
        #expect(throws: ServiceError(.invalidArgument, message)) { try things.add(record) }
        #expect(throws: ServiceError(.invalidArgument, message.replacingOccurrences(of: "record", with: "records[2]", options: .anchored))) {
            try things.add([["ok": true], record])
        }
        #expect(things.count == 0)
        let otherHost = try database.open()
        defer { otherHost.close() }
        #expect(try otherHost.collection(named: "things").count == 0, "nothing reached the database")
    }

    @Test(arguments: StoreBackendKind.allCases)
    func objectsAndDeepNestingAreRefused(_ kind: StoreBackendKind) throws {
        let store = try TestDatabase(kind).open()
        defer { store.close() }
        let things = try store.collection(named: "things")
        #expect(throws: ServiceError(.invalidArgument, "record.owner is a collection object: JSON holds only null, booleans, numbers, strings and tables")) {
            try things.add(["owner": .handle(ObjectHandle(things))])
        }
        var deep: Value = 1
        for _ in 0..<101 { deep = ["a": deep] }
        #expect(throws: ServiceError(.invalidArgument, "record" + String(repeating: ".a", count: 100) + " is nested too deeply (more than 100 tables)")) {
            try things.add(deep)
        }
        _ = try things.add(deep["a"])
        #expect(things.count == 1, "100 levels (JSON's one limit) are fine")
        let user = DataModel("user", ["name": "ann"])
        #expect(try things.add(["by": .model(user)])["by"] == ["name": "ann"], "a data model is stored as a plain table")
    }

    @Test(arguments: StoreBackendKind.allCases)
    func writesReportItemsCountThenDidChangeWithExactChangeSets(_ kind: StoreBackendKind) throws {
        let store = try TestDatabase(kind).open()
        defer { store.close() }
        let list = try store.collection(named: "list")
        let log = ChangeLog(list)
        let ids = try #require(list.add([["n": 1], ["n": 2], ["n": 3]]).arrayValue).map(\.id)
        _ = try list.update(ids[1], fields: ["n": 20])
        _ = try list.update(ids[1], fields: ["n": 20])      // no change: nothing written or reported
        _ = try list.remove(.array([.integer(ids[0]), .integer(ids[2])]))
        _ = try list.clear()
        _ = try list.clear()
        #expect(log.names == ["items", "count", "didChange", "items", "count", "didChange",
                              "items", "count", "didChange", "items", "count", "didChange"], "an empty clear reports nothing")
        let records: [Value] = [["n": 1, "id": .integer(ids[0])], ["n": 2, "id": .integer(ids[1])], ["n": 3, "id": .integer(ids[2])]]
        #expect(log.changeSets == [ChangeSet(inserted: [1, 2, 3], insertedItems: records),
                                   ChangeSet(updated: [2], updatedItems: [["n": 20, "id": .integer(ids[1])]]),
                                   ChangeSet(deleted: [1, 3]), ChangeSet(deleted: [1])])
    }

    @Test(arguments: StoreBackendKind.allCases)
    func aFailedWriteReportsNothing(_ kind: StoreBackendKind) throws {
        let store = try TestDatabase(kind).open()
        defer { store.close() }
        let list = try store.collection(named: "list")
        _ = try list.add(["n": 1])
        let log = ChangeLog(list)
        #expect(throws: ServiceError.self) { try list.remove(.array([1, 2, 3, 4])) }
        #expect(throws: ServiceError.self) { try list.add(["n": .number(.nan)]) }
        #expect(log.all.isEmpty)
    }

    @Test(arguments: StoreBackendKind.allCases)
    func aClosedStoreIsUnavailable(_ kind: StoreBackendKind) throws {
        let store = try TestDatabase(kind).open()
        let list = try store.collection(named: "list")
        store.close()
        store.close()
        #expect(throws: ServiceError(.unavailable, "the store is closed")) { try list.add(["n": 1]) }
        #expect(throws: ServiceError(.unavailable, "the store is closed")) { try store.collection(named: "other") }
    }
}
