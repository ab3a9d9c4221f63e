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
    // The mutable state is read and written on every call. `@exclusivity(unchecked)` drops the
    // runtime check each access to a class property costs: a request is used on the host's loop
    // only, and no access to these is held across a call that could come back to them.
    @exclusivity(unchecked) var completion: LuaRef?
    @exclusivity(unchecked) var waitingTask: LuaTask?
    @exclusivity(unchecked) var swiftTask: Task<Void, Never>?
    /// The answer a `replying:` method gives; cancelling marks it, so queued work may skip.
    @exclusivity(unchecked) var reply: Reply?
    @exclusivity(unchecked) var outcome: Outcome?
    @exclusivity(unchecked) var isDone = false
    @exclusivity(unchecked) var deliveryScheduled = false
    @exclusivity(unchecked) var ownerSlot: Int32 = -1
    private let ownerLink: WeakLink<Scope>?
    private let bindingLink: WeakLink<ModelBinding>
    /// The scope that owns it, while that scope lives.
    var owner: Scope? { ownerLink?.object }
    /// The binding that made it, while the binding lives.
    var binding: ModelBinding? { bindingLink.object }

    init(service: String, method: String, owner: Scope?, binding: ModelBinding) {
        self.service = service
        self.method = method
        ownerLink = owner?.weakLink
        bindingLink = binding.weakLink
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
