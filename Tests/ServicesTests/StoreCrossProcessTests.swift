import Foundation
import Model
@testable import Services
import Testing

/// Two stores on one file (two connections, as two processes would have): what one writes
/// reaches the other's observers through its poll of `PRAGMA data_version`.
@Suite struct StoreCrossProcessTests {
    @Test func aWriteByAnotherConnectionArrivesWithinASecond() async throws {
        let folder = try TemporaryFolder()
        let here = try Store(path: folder.databasePath)
        let there = try Store(path: folder.databasePath)
        let list = try here.collection(named: "list")
        let log = ChangeLog(list)
        let otherList = try there.collection(named: "list")
        // From the moment the other connection's commit is acknowledged.
        let record = try otherList.add(["from": "there"])
        let committed = Date()
        let arrived = await log.wait(seconds: 2) { !$0.changeSets.isEmpty }
        #expect(arrived)
        // Timed where the change was reported, so a busy test runner waking late does not count.
        let delay = (log.changeSetTimes.first ?? .distantFuture).timeIntervalSince(committed)
        #expect(delay < 1.0, "the change took \(delay) s to arrive")
        #expect(log.changeSets == [ChangeSet(inserted: [1], insertedItems: [record])])
        #expect(list.items == [record])

        _ = try otherList.update(record.id, fields: ["seen": true])
        #expect(await log.wait(seconds: 2) { $0.changeSets.count == 2 })
        #expect(log.changeSets.last == ChangeSet(updated: [1], updatedItems: list.items))
        _ = try otherList.clear()
        #expect(await log.wait(seconds: 2) { $0.changeSets.count == 3 })
        #expect(log.changeSets.last == ChangeSet(deleted: [1]))
        #expect(list.count == 0)
    }

    @Test func aStoreThatGoesAwayStopsPolling() async throws {
        let folder = try TemporaryFolder()
        weak var released: StoreDatabase?
        do {
            let store = try Store(path: folder.databasePath)
            _ = try store.collection(named: "list")
            released = store.database
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(released == nil, "the poller does not keep the database alive")
    }
}
