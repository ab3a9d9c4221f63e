import Dispatch
import Foundation
import Model
import PostgresTestSupport
@testable import Services
import Synchronization
import Testing

/// The PostgreSQL store's write path: a cancel takes effect only before the write is sent, so a
/// cancelled write either committed and says so or wrote nothing; the schema is upgraded from an
/// older version and a newer one is refused.
@Suite(.serialized) struct StorePostgresWriteTests {
    /// The database's name in the test cluster.
    static func name(_ database: TestDatabase) -> String { String(database.url.split(separator: "/").last ?? "") }

    static func storedCount(_ database: TestDatabase, _ collection: String) throws -> Int {
        Int(try PostgresCluster.shared().sql(name(database), "SELECT count(*) FROM crescent_records WHERE collection = '\(collection)'")
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test func aWriteCancelledBeforeItIsSentAnswersCancelledAndWritesNothing() async throws {
        let database = try TestDatabase(.postgres)
        let store = try database.open()
        defer { store.close() }
        let list = try store.collection(named: "list")
        let backend = try #require(store.postgres)
        // The backend's queue is busy until the gate opens, so the add waits there.
        let gate = DispatchSemaphore(value: 0)
        backend.queue.async { gate.wait() }
        let added = StoreWritePathTests.call { list.add(["n": 1], reply: $0) }
        #expect(added.reply.cancel(), "nothing had taken effect")
        gate.signal()
        #expect(StoreWritePathTests.errorCode(await added.wait()) == .cancelled)
        #expect(try Self.storedCount(database, "list") == 0)
        #expect(list.count == 0)
    }

    @Test func racingCancelsLeaveEachWriteEitherCommittedAndAnsweredOrNotWritten() async throws {
        let database = try TestDatabase(.postgres)
        let store = try database.open()
        defer { store.close() }
        let list = try store.collection(named: "list")
        var answers: [StoreWritePathTests.Answer] = []
        var refused = 0
        for index in 0..<60 {
            let added = StoreWritePathTests.call { list.add(["n": .integer(Int64(index))], reply: $0) }
            // Some cancel at once, some after a moment: before, during or after the write.
            if index % 3 != 0 { usleep(UInt32(index % 5) * 300) }
            if !added.reply.cancel() { refused += 1 }
            answers.append(added)
        }
        var committed: [Int64] = []
        var cancelled = 0
        for answer in answers {
            switch await answer.wait() {
            case .success(let record)?: committed.append(record["n"].integerValue ?? -1)
            case .failure(let error)? where error.code == .cancelled: cancelled += 1
            case let other: Issue.record("unexpected answer \(String(describing: other))")
            }
        }
        #expect(committed.count + cancelled == 60)
        #expect(committed.count == refused, "a cancel is refused exactly when the write went ahead")
        #expect(try Self.storedCount(database, "list") == committed.count, "each success is stored, each cancel is not")
        #expect(list.items.map { $0["n"].integerValue ?? -1 } == committed, "the collection shows exactly the committed writes")
    }

    @Test func anOlderSchemaIsUpgradedAndANewerOneRefused() throws {
        let cluster = try PostgresCluster.shared()
        let database = try TestDatabase(.postgres)
        let name = Self.name(database)
        do {
            let store = try database.open()
            _ = try store.collection(named: "kept").add(["n": 1])
            store.close()
        }
        // Back to version 1: the records without the session's and the feeds' tables.
        _ = try cluster.sql(name, """
            DROP TABLE crescent_users, crescent_feed_subscriptions, crescent_feed_items;
            UPDATE crescent_meta SET value = 1 WHERE key = 'schema_version'
            """)
        do {
            let store = try database.open()
            #expect(try store.collection(named: "kept").count == 1, "the records survive the upgrade")
            store.close()
        }
        #expect(try cluster.sql(name, "SELECT value FROM crescent_meta WHERE key = 'schema_version'")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "\(PostgresSchema.version)")
        #expect(try cluster.sql(name, "SELECT count(*) FROM crescent_users").trimmingCharacters(in: .whitespacesAndNewlines) == "0")

        _ = try cluster.sql(name, "UPDATE crescent_meta SET value = 99 WHERE key = 'schema_version'")
        let store = try database.open()
        defer { store.close() }
        #expect(throws: ServiceError.self) { try store.collection(named: "kept") }
        do {
            _ = try store.collection(named: "kept")
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("has store schema version 99, newer than this crescent knows (\(PostgresSchema.version)): upgrade crescent"), "\(error.message)")
        }
    }
}
