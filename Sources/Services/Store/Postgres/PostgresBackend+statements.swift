import Model
import PostgresNIO

/// Statements of the services that keep their state beside the records (the session's users,
/// the feeds' subscriptions), on the backend's one connection and queue, from any thread.
extension PostgresBackend {
    /// Runs `query`, a transaction of its own, and waits for its rows.
    func execute(_ query: PostgresQuery, doing: String) throws(ServiceError) -> PostgresQueryResult {
        try onQueue { () throws(ServiceError) in try run(query, doing: doing) }
    }

    /// Runs `body` (its statements through ``run(_:doing:)``) in one transaction; anything thrown
    /// rolls it back.
    func inTransaction<Output>(doing: String, _ body: () throws(ServiceError) -> Output) throws(ServiceError) -> Output {
        try onQueue { () throws(ServiceError) in try transaction(doing: doing, body) }
    }
}
