import Model

/// Runs the blocking part of a store method from the Swift task the host starts for it.
///
/// The work is short (one SQLite transaction, or a scan of a list in memory), so it runs right
/// there on the task's thread: no second hop to another queue. A request already cancelled does
/// not start.
enum StoreWork {
    static func run<Output: Sendable>(_ work: @Sendable () throws(ServiceError) -> Output) async throws(ServiceError) -> Output {
        guard !Task.isCancelled else { throw ServiceError(.cancelled, "the request was cancelled") }
        return try work()
    }
}
