import Foundation
import HTTPTestServer
import Model
import PostgresNIO
import PostgresTestSupport
@testable import Services
import Synchronization
import Testing

/// What only the PostgreSQL store does: version conflicts, reading the log below open
/// transactions, reloading after compaction, surviving a server restart, and clear errors for
/// a wrong URL, password or server (never showing the password).
@Suite(.serialized) struct StorePostgresTests {
    @Test func aConcurrentUpdateAnswersConflictAndWritesNothing() throws {
        let database = try TestDatabase(.postgres)
        let here = try database.open(), there = try database.open()
        defer { here.close(); there.close() }
        let mine = try here.collection(named: "notes")
        let record = try mine.add(["text": "first"])
        let theirs = try there.collection(named: "notes")
        // The other host has not read the change below when it writes.
        let otherBackend = try #require(there.postgres)
        otherBackend.catchUpSuspended.store(true, ordering: .releasing)
        _ = try mine.update(record.id, fields: ["text": "here"])
        #expect(throws: ServiceError(.conflict, "record \(record.id) of collection 'notes' was changed by another host since this one read it: nothing was written; read it again and retry")) {
            try theirs.update(record.id, fields: ["text": "there"])
        }
        otherBackend.catchUpSuspended.store(false, ordering: .releasing)
        try there.catchUpWithOtherProcesses()
        #expect(try theirs.get(record.id)["text"] == "here", "the conflicting write left nothing")
        #expect(try theirs.update(record.id, fields: ["text": "there"])["text"] == "there", "read again, it succeeds")
        try here.catchUpWithOtherProcesses()
        #expect(try mine.get(record.id)["text"] == "there")
    }

    /// A transaction that took its log id first but commits last must not be skipped by a host
    /// that read the later one meanwhile.
    @Test func aTransactionCommittingOutOfSequenceOrderIsNotSkipped() async throws {
        let cluster = try PostgresCluster.shared()
        let database = try TestDatabase(.postgres)
        let name = String(database.url.split(separator: "/").last ?? "")
        let writer = try database.open(), observer = try database.open()
        defer { writer.close(); observer.close() }
        let list = try writer.collection(named: "list")
        let watched = try observer.collection(named: "list")
        let snapshots = SnapshotLog(watched)
        // psql takes its log id now and commits in 5 s.
        let slow = Process()
        slow.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        slow.arguments = ["psql", "-h", cluster.folder, "-p", "\(cluster.port)", "-U", cluster.user, "-d", name, "-q", "-c", """
            BEGIN;
            WITH added AS (INSERT INTO crescent_records (collection, data) VALUES ('list', '{"from": "slow"}') RETURNING id, version, data)
            INSERT INTO crescent_changes (collection, kind, record_id, version, data) SELECT 'list', 'i', id, version, data FROM added;
            SELECT pg_sleep(5);
            COMMIT;
            """]
        let slowErrors = Pipe()
        slow.standardError = slowErrors
        try slow.run()
        var started = false
        // psql itself may take seconds to start on a loaded machine.
        for _ in 0..<3000 where !started {
            started = (try? cluster.sql(name, "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(name)' AND state = 'active' AND query LIKE '%pg_sleep(5)%' AND pid <> pg_backend_pid()")
                .trimmingCharacters(in: .whitespacesAndNewlines)) == "1"
            if !started { try await Task.sleep(nanoseconds: 10_000_000) }
        }
        #expect(started, "the slow transaction began: \(slow.isRunning ? "psql still running" : String(decoding: slowErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
        let fast = try list.add(["from": "fast"])
        slow.waitUntilExit()
        #expect(slow.terminationStatus == 0)
        let order = try cluster.sql(name, "SELECT string_agg(data->>'from', ',' ORDER BY seq) FROM crescent_changes")
        #expect(order.trimmingCharacters(in: .whitespacesAndNewlines) == "slow,fast", "the slow one has the smaller log id")
        #expect(await snapshots.wait(seconds: 10) { $0.last?.count == 2 }, "\(snapshots.lists)")
        #expect(watched.items.map { $0["from"] } == ["slow", "fast"])
        #expect(watched.items.last == fast)
        #expect(rebuild(snapshots.changeSets, snapshots: snapshots.lists) == watched.items)
        try writer.catchUpWithOtherProcesses()
        #expect(list.items == watched.items, "the writer read it too")
    }

    @Test func aHostBehindTheCompactedLogReloads() async throws {
        let database = try TestDatabase(.postgres)
        let writer = try database.open(["keep_changes": 0]), away = try database.open()
        defer { writer.close(); away.close() }
        let list = try writer.collection(named: "list")
        _ = try list.add(["n": 1])
        let behind = try away.collection(named: "list")
        let log = ChangeLog(behind)
        let awayBackend = try #require(away.postgres)
        awayBackend.catchUpSuspended.store(true, ordering: .releasing)
        _ = try list.add([["n": 2], ["n": 3]])
        // Compaction leaves the rows of transactions newer than one still open anywhere in the
        // cluster (other suites share it): compact until the log is empty.
        let name = String(database.url.split(separator: "/").last ?? "")
        var left = ""
        for _ in 0..<400 where left != "0" {
            try #require(writer.postgres).compactNow()
            left = try PostgresCluster.shared().sql(name, "SELECT count(*) FROM crescent_changes").trimmingCharacters(in: .whitespacesAndNewlines)
            if left != "0" { try await Task.sleep(nanoseconds: 50_000_000) }
        }
        try #require(left == "0", "the log was compacted")
        awayBackend.catchUpSuspended.store(false, ordering: .releasing)
        try away.catchUpWithOtherProcesses()
        #expect(log.changeSets.last?.reload == true, "\(log.changeSets)")
        #expect(behind.items == list.items)
        _ = try list.add(["n": 4])
        try away.catchUpWithOtherProcesses()
        #expect(behind.items == list.items, "it follows the log again")
    }

    @Test func losingTheServerAnswersUnavailableThenCatchesUp() async throws {
        let cluster = try PostgresCluster.makeOwn()
        defer { try? cluster.stop() }
        let url = try cluster.makeDatabase("restart")
        let writer = try Store(url: url), observer = try Store(url: url)
        defer { writer.close(); observer.close() }
        let list = try writer.collection(named: "list")
        let watched = try observer.collection(named: "list")
        _ = try list.add(["n": 1])
        try cluster.stop()
        #expect(watched.count == 1 || watched.count == 0, "collections keep their state")
        let failed: ServiceError? = { () -> ServiceError? in do throws(ServiceError) { _ = try list.add(["n": 2]); return nil } catch { return error } }()
        #expect(failed?.code == .unavailable, "\(String(describing: failed))")
        #expect(failed.map { !$0.message.contains(cluster.password) } ?? false)
        #expect(list.count == 1, "collections keep their state")
        try cluster.start()
        var added: Value?
        for _ in 0..<300 where added == nil {
            added = try? list.add(["n": 3])
            if added == nil { try await Task.sleep(nanoseconds: 20_000_000) }
        }
        #expect(added != nil, "the writer reconnected")
        let snapshots = SnapshotLog(watched)
        #expect(await snapshots.wait(seconds: 15) { _ in watched.count == list.count }, "the observer caught up")
        #expect(watched.items == list.items)
    }

    /// The server ends the connection while the backend's queue is busy, so the queue has not yet
    /// heard of it when it sends the next statement: that statement answers `unavailable` at once
    /// instead of never (PostgresNIO drops a request written to a closed channel unanswered), and
    /// the next write after reconnecting succeeds.
    @Test func aStatementSentOnAConnectionThatClosedUnheardAnswersUnavailable() async throws {
        let cluster = try PostgresCluster.shared()
        let url = try cluster.makeDatabase("closed")
        let database = String(url.split(separator: "/").last ?? "")
        let store = try Store(url: url)
        defer { store.close() }
        let list = try store.collection(named: "list")
        _ = try list.add(["n": 1])
        let backend = try #require(store.postgres)
        let answered = DispatchSemaphore(value: 0)
        let outcome = Mutex<ServiceError??>(nil)
        Thread.detachNewThread {
            let error = { () -> ServiceError? in
                do throws(ServiceError) {
                    // Held on the queue, the backend cannot take in the news of the close.
                    return try backend.onQueue { () throws(ServiceError) -> ServiceError? in
                        let connection = try backend.connection()
                        _ = try? cluster.sql(database, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)' AND pid <> pg_backend_pid()")
                        for _ in 0..<1_000 where !connection.isClosed { usleep(5_000) }
                        guard connection.isClosed else { return ServiceError(.internal, "the server did not close the connection") }
                        do throws(ServiceError) { _ = try backend.run("SELECT 1", doing: "testing"); return nil } catch { return error }
                    }
                } catch {
                    return error
                }
            }()
            outcome.withLock { $0 = .some(error) }
            answered.signal()
        }
        // Without the check, the statement's wait never ends: the thread, and the backend's queue
        // with it, are then left behind, and so is the rest of this test.
        guard answered.wait(timeout: .now() + 20) == .success else {
            Issue.record("the statement on the closed connection never answered")
            return
        }
        let error = outcome.withLock { $0 } ?? nil
        #expect(error?.code == .unavailable, "\(String(describing: error))")
        var added: Value?
        for _ in 0..<300 where added == nil {
            added = try? list.add(["n": 2])
            if added == nil { try await Task.sleep(nanoseconds: 20_000_000) }
        }
        #expect(added != nil, "the store reconnected")
        #expect(list.count == 2)
    }

    @Test func badURLsPasswordsAndServersGiveClearErrorsWithoutThePassword() throws {
        let cluster = try PostgresCluster.shared()
        let database = try TestDatabase(.postgres)
        let name = String(database.url.split(separator: "/").last ?? "")
        let wrong = try Store(url: cluster.url(database: name, password: "not-the-password-42"))
        defer { wrong.close() }
        let refused = #expect(throws: ServiceError.self) { try wrong.collection(named: "x") }
        #expect(refused?.code == .permission)
        #expect(refused?.message.contains("the store database \"\(name)\" at 127.0.0.1:\(cluster.port)") == true, "\(String(describing: refused))")
        #expect(refused?.message.contains("password authentication failed") == true, "\(String(describing: refused))")
        #expect(refused?.message.contains("not-the-password-42") == false)

        let missing = try Store(url: cluster.url(database: "no_such_db"))
        defer { missing.close() }
        let notFound = #expect(throws: ServiceError.self) { try missing.collection(named: "x") }
        #expect(notFound?.message.contains("\"no_such_db\" at 127.0.0.1:\(cluster.port)") == true, "\(String(describing: notFound))")
        #expect(notFound?.message.contains(cluster.password) == false)

        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let closedPort = refusing.port
        let unreachable = try Store(url: "postgres://crescent:secret-77@127.0.0.1:\(closedPort)/notes")
        defer { unreachable.close() }
        let down = #expect(throws: ServiceError.self) { try unreachable.collection(named: "x") }
        #expect(down?.code == .unavailable)
        #expect(down?.message.contains("cannot reach the store database \"notes\" at 127.0.0.1:\(closedPort)") == true, "\(String(describing: down))")
        #expect(down?.message.contains("secret-77") == false)
        #expect(unreachable.path == "postgres://crescent@127.0.0.1:\(closedPort)/notes", "the path hides the password")

        #expect(throws: ServiceError(.invalidArgument, "[store] url is not a PostgreSQL URL (postgres://user:password@host:port/database): the port must be a number in 1-65535, got \"99999\"")) {
            try Store(url: "postgres://me:pw@db:99999/x")
        }
    }

    @Test func aUnixSocketURLWorks() throws {
        let cluster = try PostgresCluster.shared()
        let database = try TestDatabase(.postgres)
        let name = String(database.url.split(separator: "/").last ?? "")
        let store = try Store(url: cluster.socketURL(database: name))
        defer { store.close() }
        let list = try store.collection(named: "list")
        _ = try list.add(["over": "socket"])
        #expect(list.count == 1)
    }
}
