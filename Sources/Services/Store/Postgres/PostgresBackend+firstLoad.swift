import Dispatch
import Model
import Synchronization

/// A collection's first load never holds the caller (the host's loop) for another session's lock.
///
/// `LOCK TABLE crescent_records` in another session, or work on the queue ahead of the load (a
/// write waiting for that lock), would otherwise stop every timer for as long as the lock lasts
/// (harden4 H2). The load gives up on a lock after ``firstLoadLockTimeout``, and the caller waits
/// for it at most ``firstLoadWait``; past either, the collection answers at once, unloaded
/// (empty), and its records arrive as a change once read, as the SQLite backend does. While it
/// is unloaded, catch-ups leave it alone (its load reads what they would bring), and a write to
/// it first reads it, waiting on the queue as the write itself would.
extension PostgresBackend {
    /// How long a first load waits for another session's lock on the records table.
    static let firstLoadLockTimeout = Duration.milliseconds(200)
    /// How long the caller waits for the first load, work queued ahead of it included.
    static let firstLoadWait = Duration.seconds(1)
    /// How long an unloaded collection waits before trying to read its records again.
    static let loadRetryDelay = Duration.seconds(1)

    /// The collection `name`: the one this host follows, or a new one, loaded now unless that
    /// would wait (see the extension's documentation).
    func firstLoad(_ name: String, make: (CollectionRows) -> StoreCollection) throws(ServiceError) -> StoreCollection {
        // Registered at once, unloaded, so a second call finds it while the load is under way.
        let (collection, isNew) = follows.withLock { follows -> (StoreCollection, Bool) in
            if let known = follows[name]?.collection { return (known, false) }
            let made = make(.unloaded)
            follows[name] = Follow(collection: made, versions: [:], loadedIn: nil)
            return (made, true)
        }
        guard isNew else { return collection }
        let failure = FirstLoadFailure()
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) {
            load(collection, lockTimeout: Self.firstLoadLockTimeout, failure: failure)
        } else {
            let finished = DispatchSemaphore(value: 0)
            queue.async { [weak collection] in
                defer { finished.signal() }
                guard let collection else { return }
                self.load(collection, lockTimeout: Self.firstLoadLockTimeout, failure: failure)
            }
            let wait = Self.firstLoadWait.components
            let deadline = DispatchTime.now() + .nanoseconds(Int(wait.seconds) * 1_000_000_000 + Int(wait.attoseconds / 1_000_000_000))
            guard finished.wait(timeout: deadline) == .success else { return collection }
        }
        if let error = failure.error.withLock({ $0 }) {
            follows.withLock { follows in if follows[name]?.collection === collection { follows[name] = nil } }
            throw error
        }
        return collection
    }

    /// Reads `collection`'s records when it is unloaded and reports them as a change (nobody
    /// observes a collection not yet returned). Call on the queue.
    ///
    /// - Parameters:
    ///   - lockTimeout: how long to wait for another session's lock; past it, the read is tried
    ///     again every ``loadRetryDelay`` (as after a lost connection).
    ///   - failure: where any other error goes (the first load's caller throws it, if it still
    ///     waits). A lost connection is tried again too; any other error leaves the collection
    ///     unloaded until a write or a reload reads it.
    func load(_ collection: StoreCollection, lockTimeout: Duration?, failure: FirstLoadFailure? = nil) {
        do throws(ServiceError) {
            try loadIfNeeded(collection, lockTimeout: lockTimeout)
        } catch {
            // A caller still waiting throws it (a lock is no failure: the records come later).
            if !Self.isLockTimeout(error) { failure?.error.withLock { $0 = error } }
            guard Self.isLockTimeout(error) || error.code == .unavailable else { return }
            clock.schedule(after: Self.loadRetryDelay) { [weak self, weak collection] in
                guard let self, let collection else { return }
                queue.async { self.load(collection, lockTimeout: lockTimeout) }
            }
        }
    }

    /// Reads `collection`'s records when it is unloaded. Call on the queue.
    func loadIfNeeded(_ collection: StoreCollection, lockTimeout: Duration? = nil) throws(ServiceError) {
        guard !collection.rows.withLock({ $0.isLoaded }) else { return }
        let name = collection.name
        let loaded = try load([name], lockTimeout: lockTimeout)
        follows.withLock { follows in
            guard follows[name]?.collection === collection else { return }
            follows[name]?.versions = loaded.versions[name] ?? [:]
            follows[name]?.loadedIn = loaded.snapshot
        }
        collection.apply { $0.replaceAll(with: loaded.rows[name] ?? []) }
    }

    /// Whether `error` is PostgreSQL's `lock_timeout` (SQLSTATE 55P03, lock_not_available).
    static func isLockTimeout(_ error: ServiceError) -> Bool {
        error.message.contains("(SQLSTATE 55P03)")
    }
}

/// The error of a first load that failed for a reason other than a lock, for its caller.
final class FirstLoadFailure: Sendable {
    let error = Mutex<ServiceError?>(nil)
}
