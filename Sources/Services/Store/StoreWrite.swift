import GRDB

/// One write, ready to run: what it does inside its transaction, and what follows the commit
/// (still on the writer: the new rows in memory and their reports).
struct StoreWrite<Change, Output>: Sendable {
    /// How many rows it touches: large writes stay off the loop.
    let size: Int
    let change: @Sendable (Database) throws -> Change
    let committed: @Sendable (Change) -> Output
}
