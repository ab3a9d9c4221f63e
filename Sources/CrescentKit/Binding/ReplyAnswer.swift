import Model
import Synchronization

/// What hands a `replying:` method's answer to its request, until the request finishes.
///
/// A service may keep a ``Model/Reply`` after the call ended (a cancelled call it never answers,
/// a test's held reply), and the resolver reaches the host through its link: held by the reply
/// for good, it kept a finished host, its binding and its VM's memory alive. The request lets
/// go of it as it finishes; an answer after that went nowhere already (the request was done).
final class ReplyAnswer: Sendable {
    private let resolve: Mutex<(@Sendable (ServiceRequest.Outcome) -> Void)?>

    init(_ resolve: @escaping @Sendable (ServiceRequest.Outcome) -> Void) {
        self.resolve = Mutex(resolve)
    }

    /// Hands `result` to the request, unless it has finished.
    func give(_ result: Result<Value, ServiceError>) {
        guard let resolve = resolve.withLock({ $0 }) else { return }
        switch result {
        case .success(let value): resolve(.success(value))
        case .failure(let error): resolve(.failure(error))
        }
    }

    /// The request finished: nothing is handed to it any more.
    func drop() {
        resolve.withLock { $0 = nil }
    }
}
