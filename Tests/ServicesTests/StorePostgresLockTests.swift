import Foundation
import Model
import PostgresTestSupport
@testable import Services
import Testing

/// Another session holding a lock on `crescent_records` (`LOCK TABLE` in `psql`) never holds the
/// caller of `collection(named:)` (the host's loop) for the lock (harden4 H2: 22 s, every timer
/// stopped): the collection answers at once, empty, and its records arrive once the lock ends;
/// a write queued behind the lock holds a new collection up no longer either.
@Suite(.serialized) struct StorePostgresLockTests {
    /// 1 while another session holds the lock.
    static let locked = """
        SELECT count(*) FROM pg_locks WHERE relation = 'crescent_records'::regclass AND mode = 'AccessExclusiveLock'
        AND granted AND pid <> pg_backend_pid()
        """

    @Test func openingACollectionNeverWaitsForAnotherSessionsLock() async throws {
        let cluster = try PostgresCluster.shared()
        let database = try TestDatabase(.postgres)
        let name = String(database.url.split(separator: "/").last ?? "")
        let before = try database.open()
        _ = try before.collection(named: "lk").add(["n": 7])
        before.close()

        let host = try database.open()
        defer { host.close() }
        // Connected before the lock, as a host that used another collection already is.
        _ = try host.collection(named: "warm")
        let lock = try IdleTransaction(cluster: cluster, database: name,
                                       begin: "BEGIN; LOCK TABLE crescent_records IN ACCESS EXCLUSIVE MODE;", held: Self.locked)
        defer { lock.end() }

        let started = Date()
        let list = try host.collection(named: "lk")
        let waited = Date().timeIntervalSince(started)
        #expect(waited < 3, "collection(named:) waited \(waited) s for the lock")
        #expect(list.count == 0, "not read yet")
        #expect(try host.collection(named: "lk") === list, "one collection per name while it loads")

        // A write waits for the lock off the caller; a new collection meanwhile does not wait.
        let writing = Thread { _ = try? list.add(["n": 8]) }
        writing.start()
        try await Task.sleep(nanoseconds: 300_000_000)
        let second = Date()
        let other = try host.collection(named: "other")
        #expect(Date().timeIntervalSince(second) < 3, "a write waiting for the lock held a new collection up")
        #expect(other.count == 0)
        #expect(lock.isOpen, "the lock was held throughout")

        lock.end()
        let deadline = Date().addingTimeInterval(20)
        while list.count < 2 && Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
        #expect(list.items.map { $0["n"] } == [7, 8], "its records arrive once the lock ends")
    }
}

