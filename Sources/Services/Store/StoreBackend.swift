import Model

/// Where a store's collections are kept: an SQLite file (``SQLiteBackend``, the default) or a
/// PostgreSQL database (``PostgresBackend``), chosen by `[store] url`.
///
/// A collection checks its arguments, then hands the backend a ``StoreOperation``. The backend
/// commits it and changes the collection's rows through ``StoreCollection/apply(_:)``, and does
/// the same for what other hosts commit, always from one serial context so change sets leave in
/// the order the backend applies them. Either way a success means committed.
protocol StoreBackend: AnyObject, Sendable {
    /// The settings it was made with.
    var settings: StoreSettings { get }
    /// Where the records live, for messages: a path or a URL without its password.
    var displayName: String { get }

    /// The collection named `name`, loading its records and following other hosts' changes to
    /// it. `make` builds the object from the loaded rows (it returns an existing one if another
    /// call got there first); it runs where no change can fall between the load and the first
    /// change the collection reports. It never waits on the calling thread (the loop) for
    /// another process: when loading would, it may answer with a collection made from
    /// ``CollectionRows/unloaded`` whose records arrive later as a change.
    func collection(_ name: String, make: (CollectionRows) -> StoreCollection) throws(ServiceError) -> StoreCollection

    /// Runs `operation` on `collection`, blocking until it committed (Swift callers).
    func write(_ operation: StoreOperation, to collection: StoreCollection) throws(ServiceError) -> Value

    /// Runs the operation `prepare` makes (checking a large batch is work too) on `collection`
    /// and answers through `reply`: at once when it can, else from the backend's own queue.
    ///
    /// - Parameter size: how many rows it touches, known before `prepare` runs.
    func write(size: Int, _ prepare: @escaping @Sendable () throws(ServiceError) -> StoreOperation,
               to collection: StoreCollection, reply: Reply)

    /// Reads what other hosts committed, now rather than at the next notification or poll.
    func catchUpNow() throws(ServiceError)

    /// Stops following other hosts and lets go of the database; later calls fail with
    /// `unavailable`. Idempotent.
    func close()
}
