import Foundation
import GRDB
import Model
@testable import Services
import Synchronization
import Testing

/// Where a script's write runs: right on the calling thread (the host's loop) when nothing can
/// make it wait, else on the store's writer queue; in commit order either way, and acknowledged
/// only once committed.
@Suite struct StoreWritePathTests {
    /// A reply that records its answer and whether it came before the call returned.
    final class Answer: Sendable {
        private final class State: Sendable {
            let result = Mutex<Result<Value, ServiceError>?>(nil)
            let returned = Atomic<Bool>(false)
            let answeredBeforeReturn = Atomic<Bool>(false)
        }

        private let state = State()
        let reply: Reply

        /// - Parameter caller: the thread that will make the call.
        init(caller: pthread_t = pthread_self()) {
            let state = self.state
            reply = Reply { answer in
                // On the calling thread, before the call returned: the write ran right there.
                if pthread_equal(pthread_self(), caller) != 0 && !state.returned.load(ordering: .acquiring) {
                    state.answeredBeforeReturn.store(true, ordering: .releasing)
                }
                state.result.withLock { $0 = answer }
            }
        }

        /// Call right after the method returned.
        func methodReturned() { state.returned.store(true, ordering: .releasing) }
        var wasImmediate: Bool { state.answeredBeforeReturn.load(ordering: .acquiring) }
        var outcome: Result<Value, ServiceError>? { state.result.withLock { $0 } }

        /// Waits (up to 10 s) for the answer.
        func wait() async -> Result<Value, ServiceError>? {
            let deadline = Date().addingTimeInterval(10)
            while outcome == nil && Date() < deadline { try? await Task.sleep(nanoseconds: 2_000_000) }
            return outcome
        }
    }

    /// Calls `method` with a fresh answer.
    static func call(_ method: (Reply) -> Void) -> Answer {
        let answer = Answer()
        method(answer.reply)
        answer.methodReturned()
        return answer
    }

    /// Another process's connection holding SQLite's write lock until `release()`.
    final class LockHolder: Sendable {
        private let released = DispatchSemaphore(value: 0)

        init(_ path: String) throws {
            let other = try DatabaseQueue(path: path)
            let locked = DispatchSemaphore(value: 0), released = self.released
            Thread {
                try? other.writeWithoutTransaction { db in
                    try db.beginTransaction(.immediate)
                    locked.signal()
                    released.wait()
                    try db.commit()
                }
            }.start()
            locked.wait()
        }

        func release() { released.signal() }
    }

    /// The code of a failed outcome, nil for a success or no outcome.
    static func errorCode(_ outcome: Result<Value, ServiceError>?) -> ServiceError.Code? {
        guard case .failure(let error) = outcome else { return nil }
        return error.code
    }

    static func makeStore(_ folder: TemporaryFolder, _ section: Fields = [:]) throws -> Store {
        try #require(Store.make(folder.context(section.isEmpty ? [:] : ["store": .object(section)])).first as? Store)
    }

    @Test func smallWritesAnswerBeforeTheCallReturns() async throws {
        let folder = try TemporaryFolder()
        let list = try Self.makeStore(folder).collection(named: "list")
        let added = Self.call { list.add(["n": 1], reply: $0) }
        #expect(added.wasImmediate)
        let record = try #require(try added.outcome?.get())
        let updated = Self.call { list.update(record.id, fields: ["n": 2], reply: $0) }
        #expect(updated.wasImmediate)
        #expect(try updated.outcome?.get()["n"] == .integer(2))
        let missing = Self.call { list.update(999, fields: ["n": 2], reply: $0) }
        #expect(missing.wasImmediate)
        #expect(Self.errorCode(missing.outcome) == .notFound)
        let removed = Self.call { list.remove(.integer(record.id), reply: $0) }
        #expect(removed.wasImmediate)
        #expect(try removed.outcome?.get() == .integer(1))
        #expect(try Store(path: folder.databasePath).collection(named: "list").count == 0, "committed")
    }

    @Test func writeOnLoopFalseLargeBatchesAndFullSyncGoToTheWriterQueue() async throws {
        let queued = try TemporaryFolder()
        let queuedList = try Self.makeStore(queued, ["write_on_loop": false]).collection(named: "list")
        let small = Self.call { queuedList.add(["n": 1], reply: $0) }
        #expect(!small.wasImmediate)
        #expect(try await small.wait()?.get()["n"] == .integer(1))

        let batchFolder = try TemporaryFolder()
        let list = try Self.makeStore(batchFolder).collection(named: "list")
        let records: [Value] = (1...65).map { ["n": .integer(Int64($0))] }
        let batch = Self.call { list.add(.array(records), reply: $0) }
        #expect(!batch.wasImmediate, "more than 64 rows")
        #expect(try await batch.wait()?.get().arrayValue?.count == 65)

        let fullFolder = try TemporaryFolder()
        let fullList = try Self.makeStore(fullFolder, ["synchronous": "full"]).collection(named: "list")
        let synced = Self.call { fullList.add(["n": 1], reply: $0) }
        #expect(!synced.wasImmediate, "a commit that syncs the disk")
        #expect(try await synced.wait()?.get()["n"] == .integer(1))
    }

    /// harden4 H12: a one-record write of large values goes to the writer queue (encoding and
    /// checking 100 MiB on the loop stopped every timer for 30 s); the weighing is bounded, so
    /// a record of many small fields goes there too, while a small record stays on the loop.
    @Test func largeRecordsGoToTheWriterQueue() async throws {
        let folder = try TemporaryFolder()
        let list = try Self.makeStore(folder).collection(named: "list")
        let big = Value.string(String(repeating: "x", count: 4 * 1024 * 1024))
        let added = Self.call { list.add(["s": big], reply: $0) }
        #expect(!added.wasImmediate, "a 4 MiB record")
        let record = try #require(try await added.wait()?.get())
        #expect(record["s"] == big)
        let nested = Self.call { list.add(["deep": ["tags": .array([big])]], reply: $0) }
        #expect(!nested.wasImmediate, "a 4 MiB string inside a table")
        #expect(try await nested.wait()?.get() != nil)
        let updated = Self.call { list.update(record.id, fields: ["s": big, "t": big], reply: $0) }
        #expect(!updated.wasImmediate, "an 8 MiB update")
        #expect(try await updated.wait()?.get()["t"] == big)
        let many = Value.object(Fields(distinctFields: (1...5_000).map { (key: "f\($0)", value: Value.integer(Int64($0))) }))
        let wide = Self.call { list.add(many, reply: $0) }
        #expect(!wide.wasImmediate, "5,000 fields")
        #expect(try await wide.wait()?.get() != nil)
        let small = Self.call { list.add(["s": .string(String(repeating: "x", count: 1_000))], reply: $0) }
        #expect(small.wasImmediate, "a 1 KB record")
    }

    /// Another process holding SQLite's write lock: the write does not wait on the calling
    /// thread; it waits on the writer queue and commits once the lock is free.
    @Test func aLockHeldByAnotherProcessIsWaitedForOffTheCallingThread() async throws {
        let folder = try TemporaryFolder()
        let list = try Self.makeStore(folder).collection(named: "list")
        let lock = try LockHolder(folder.databasePath)
        let added = Self.call { list.add(["n": 1], reply: $0) }
        #expect(!added.wasImmediate)
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(added.outcome == nil, "not acknowledged while the other process holds the lock")
        lock.release()
        #expect(try await added.wait()?.get()["n"] == .integer(1))
        #expect(list.count == 1)
    }

    /// A write made while another is queued does not overtake it: ids follow the calls.
    @Test func writesCommitInTheOrderTheyWereMade() async throws {
        let folder = try TemporaryFolder()
        let list = try Self.makeStore(folder).collection(named: "list")
        let lock = try LockHolder(folder.databasePath)
        let records: [Value] = (1...100).map { ["n": .integer(Int64($0))] }
        let batch = Self.call { list.add(.array(records), reply: $0) }
        let single = Self.call { list.add(["n": 0], reply: $0) }
        #expect(!single.wasImmediate, "the batch is still queued")
        lock.release()
        let batchIDs = try #require(try await batch.wait()?.get().arrayValue?.map(\.id))
        let singleID = try #require(try await single.wait()?.get().id)
        #expect(batchIDs.allSatisfy { $0 < singleID })
        #expect(list.items.last?["n"] == .integer(0))
    }

    /// What another process committed is read on the writer queue, not on the calling thread;
    /// the write follows it and the change sets replay in order.
    @Test func anotherProcessesWritesAreCaughtUpOffTheCallingThread() async throws {
        let folder = try TemporaryFolder()
        // No poll in between: the write itself finds the other process's commit.
        let store = try Self.makeStore(folder, ["poll_interval": 60])
        let list = try store.collection(named: "list")
        let log = ChangeLog(list)
        _ = try Store(path: folder.databasePath).collection(named: "list").add(["from": "other"])
        let added = Self.call { list.add(["from": "here"], reply: $0) }
        #expect(!added.wasImmediate)
        _ = try await added.wait()?.get()
        #expect(list.items.map { $0["from"] } == ["other", "here"])
        #expect(log.changeSets == [ChangeSet(inserted: [1], insertedItems: [list.items[0]]), ChangeSet(inserted: [2], insertedItems: [list.items[1]])])
    }

    /// A queued write whose caller cancelled before it started does not run.
    @Test func aCancelledQueuedWriteIsNotMade() async throws {
        let folder = try TemporaryFolder()
        let list = try Self.makeStore(folder, ["write_on_loop": false]).collection(named: "list")
        let lock = try LockHolder(folder.databasePath)
        let first = Self.call { list.add(["n": 1], reply: $0) }        // waits for the lock
        let second = Self.call { list.add(["n": 2], reply: $0) }       // queued behind it
        second.reply.cancel()
        lock.release()
        #expect(try await first.wait()?.get()["n"] == .integer(1))
        let outcome = await second.wait()
        #expect(Self.errorCode(outcome) == .cancelled)
        #expect(list.items.map { $0["n"] } == [.integer(1)])
    }

    /// Commits on the calling thread never checkpoint; checkpoints are queued on the writer, so
    /// the log still starts over instead of growing with everything written.
    @Test func theLogIsCheckpointedOnTheWriterQueue() async throws {
        let folder = try TemporaryFolder()
        let list = try Self.makeStore(folder).collection(named: "list")
        let text = String(repeating: "x", count: 8_000)
        var immediate = 0
        for index in 0..<1_000 {
            let added = Self.call { list.add(["i": .integer(Int64(index)), "text": .string(text)], reply: $0) }
            if added.wasImmediate { immediate += 1 }
            _ = try await added.wait()?.get()
        }
        #expect(list.count == 1_000)
        #expect(immediate > 900, "most writes ran on the calling thread (\(immediate))")
        let log = try FileManager.default.attributesOfItem(atPath: folder.databasePath + "-wal")[.size] as? Int ?? 0
        // About 8 MB went through the log; without checkpoints it would hold all of it.
        #expect(log < 2 * StoreDatabase.checkpointFrames * 4_120, "the log is \(log) bytes")
    }
}
