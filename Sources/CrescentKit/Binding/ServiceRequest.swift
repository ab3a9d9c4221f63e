import LuaBridge
import Model

/// One call of a service method with a completion: the Swift side of the `Request` handle.
///
/// Its outcome is delivered exactly once and always on a later loop turn: to the completion, or to
/// the task awaiting it. `Request:cancel()` before that makes the outcome `cancelled`; an owner that
/// ends drops the request silently (a controller that is gone receives nothing).
final class ServiceRequest: Cancellable, Hashable {
    enum Outcome {
        case success(Value)
        case failure(ServiceError)
    }

    let service: String
    let method: String
    var completion: LuaRef?
    var waitingTask: LuaTask?
    var swiftTask: Task<Void, Never>?
    /// The answer a `replying:` method gives; cancelling marks it, so queued work may skip.
    var reply: Reply?
    var outcome: Outcome?
    var isDone = false
    var deliveryScheduled = false
    var ownerSlot: Int32 = -1
    weak var owner: Scope?
    weak var binding: ModelBinding?

    init(service: String, method: String, owner: Scope?, binding: ModelBinding) {
        self.service = service
        self.method = method
        self.owner = owner
        self.binding = binding
    }

    /// The owner ended: stop the work and deliver nothing.
    func cancel() {
        guard !isDone else { return }
        finish()
    }

    /// Marks the request done and lets go of everything it held.
    func finish() {
        isDone = true
        swiftTask?.cancel()
        swiftTask = nil
        // Work that has not answered yet is told to stop; an answered one has nothing to stop.
        if outcome == nil { reply?.cancel() }
        reply = nil
        completion = nil
        waitingTask = nil
        binding?.requests.remove(self)
        owner?.forget(self)
    }

    static func == (lhs: ServiceRequest, rhs: ServiceRequest) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
