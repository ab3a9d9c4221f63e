import Dispatch
import Foundation
import Model
@testable import Services
import Synchronization
import Testing

/// The store's behaviour, the same on SQLite and on PostgreSQL: ids and order, updates,
/// all-or-nothing removal, types surviving a reopen, and another host's writes arriving as
/// change sets that rebuild the list.
@Suite struct StoreBackendTests {
    @Test(arguments: StoreBackendKind.allCases)
    func writesKeepIDsOrderAndAllOrNothing(_ kind: StoreBackendKind) throws {
        let database = try TestDatabase(kind)
        let store = try database.open()
        defer { store.close() }
        let todo = try store.collection(named: "todo")
        let first = try todo.add(["title": "a", "done": false])
        let more = try #require(todo.add([["title": "b"], ["title": "c", "id": 99]]).arrayValue)
        #expect(more.map(\.id) == [first.id + 1, first.id + 2], "a given id is replaced")
        #expect(todo.items.map { $0["title"] } == ["a", "b", "c"])
        #expect(try todo.add(.array([])) == .array([]))

        let updated = try todo.update(first.id, fields: ["done": true])
        #expect(updated == ["title": "a", "done": true, "id": .integer(first.id)])
        #expect(try todo.get(first.id) == updated, "the write shows when it answers")
        #expect(throws: ServiceError(.notFound, "no record with id 12345 in collection 'todo'")) {
            try todo.update(12345, fields: ["done": true])
        }
        #expect(throws: ServiceError(.notFound, "no record with id 999 in collection 'todo'")) {
            try todo.remove(.array([.integer(first.id), 999]))
        }
        #expect(todo.count == 3, "nothing removed")
        #expect(try todo.remove(.array([.integer(first.id), .integer(more[1].id)])) == 2)
        #expect(todo.items.map { $0["title"] } == ["b"])
        #expect(try store.collection(named: "other").count == 0, "collections are separate")
        #expect(try todo.clear() == 1)
        #expect(todo.items.isEmpty)
    }

    @Test(arguments: StoreBackendKind.allCases)
    func recordsSurviveReopeningWithTheirTypes(_ kind: StoreBackendKind) throws {
        let database = try TestDatabase(kind)
        let record: Value = ["int": 1, "float": 1.0, "half": -0.5, "big": 1e300, "text": "é \"quoted\"\n", "flag": true,
                             "list": [1, [2, 3], ["k": "v"]], "nested": ["a": ["b": ["c": -0.5]]]]
        let stored: Value
        do {
            let store = try database.open()
            stored = try store.collection(named: "things").add(record)
            store.close()
        }
        let store = try database.open()
        defer { store.close() }
        let reopened = try store.collection(named: "things")
        #expect(reopened.items == [stored])
        #expect(reopened.items.first?["float"] == .number(1.0), "a float stays a float")
        #expect(reopened.items.first?["int"] == .integer(1))
    }

    @Test(arguments: StoreBackendKind.allCases)
    func anotherHostsWritesArriveAsChangeSetsThatRebuildTheList(_ kind: StoreBackendKind) async throws {
        let database = try TestDatabase(kind)
        let here = try database.open(), there = try database.open()
        defer { here.close(); there.close() }
        let list = try here.collection(named: "list")
        let snapshots = SnapshotLog(list)
        let theirs = try there.collection(named: "list")
        let a = try theirs.add(["n": 1])
        _ = try theirs.add([["n": 2], ["n": 3]])
        _ = try theirs.update(a.id, fields: ["n": 10])
        _ = try theirs.remove(.integer(a.id))
        let last = try theirs.add(["n": 4])
        #expect(await snapshots.wait(seconds: 10) { $0.last?.last == last }, "\(snapshots.lists)")
        #expect(list.items == theirs.items)
        #expect(rebuild(snapshots.changeSets, snapshots: snapshots.lists) == theirs.items)
        _ = try theirs.clear()
        #expect(await snapshots.wait(seconds: 10) { $0.last?.isEmpty == true })
        #expect(list.count == 0)
    }
}

extension StoreBackendTests {
    @Test(arguments: StoreBackendKind.allCases)
    func threeHostsWritingAtOnceAgreeAndTheirChangeSetsRebuildTheList(_ kind: StoreBackendKind) async throws {
        let database = try TestDatabase(kind)
        let stores = try (0..<3).map { _ in try database.open() }
        defer { for store in stores { store.close() } }
        let collections = try stores.map { try $0.collection(named: "shared") }
        let logs = collections.map { SnapshotLog($0) }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { host in
            for i in 0..<40 {
                do {
                    _ = try collections[host].add(["host": .integer(Int64(host)), "i": .integer(Int64(i))])
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        for store in stores { try store.catchUpWithOtherProcesses() }
        for log in logs {
            #expect(await log.wait(seconds: 20) { $0.last?.count == 120 }, "\(log.lists.last?.count ?? 0)")
        }
        for (collection, log) in zip(collections, logs) {
            #expect(collection.items == collections[0].items, "the same items in the same order")
            #expect(rebuild(log.changeSets, snapshots: log.lists) == collection.items, "the change sets rebuild the list")
        }
    }
}

/// The change sets a collection reports, each with the list right after it (the `items` the
/// collection reports just before it: a sink runs under the collection's lock, so it cannot read).
final class SnapshotLog: Sendable {
    /// The change sets with their lists, and the list of the last `items` report.
    private let log = Mutex<(entries: [(ChangeSet, [Value])], lastItems: [Value])>(([], []))

    init(_ collection: StoreCollection) {
        collection.changes.attach { change in
            self.log.withLock { log in
                switch change {
                case .property("items", .array(let items)):
                    log.lastItems = items
                case .event("didChange", let payload):
                    guard let changeSet = ChangeSet(payload) else { return }
                    log.entries.append((changeSet, log.lastItems))
                default:
                    break
                }
            }
        }
    }

    var changeSets: [ChangeSet] { log.withLock { $0.entries.map(\.0) } }
    var lists: [[Value]] { log.withLock { $0.entries.map(\.1) } }

    /// Waits up to `seconds` for `condition` over the lists seen so far.
    func wait(seconds: Double, until condition: ([[Value]]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(lists) { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return condition(lists)
    }
}
