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

    /// Where the request is in its one delivery.
    enum State {
        /// The work is under way; no outcome yet.
        case pending
        /// The outcome is known and its one delivery is queued for a later turn (a user's cancel
        /// may still replace it with `cancelled` until then).
        case resolved(Outcome)
        /// Delivered, or dropped by its owner: nothing more happens.
        case done
    }

    let service: String
    let method: String
    /// The object whose method this is: its answer is pushed as that object hands out values
    /// (``ModelBinding/push(_:of:onto:)``).
    var object: (any ModelObject)?
    // Read and written on every call, on the host's loop only. Internal, so the optimizer sees
    // every access and drops the run-time exclusivity check: no access to these is held across a
    // call that could come back to them.
    var completion: LuaRef?
    var waitingTask: LuaTask?
    var swiftTask: Task<Void, Never>?
    /// The answer a `replying:` method gives; cancelling marks it, so queued work may skip.
    var reply: Reply?
    /// How the reply reaches this request (and the host), let go of as the request finishes.
    var replyAnswer: ReplyAnswer?
    private(set) var state = State.pending
    var ownerSlot: Int32 = -1
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

    /// True once delivered or dropped.
    var isDone: Bool {
        if case .done = state { return true }
        return false
    }

    /// Records `outcome` as the one to deliver; false when the request already had one (its
    /// delivery is queued already) or is done. With `replacing`, a known outcome is replaced
    /// (a user's cancel wins over an answer not yet delivered).
    func resolve(_ outcome: Outcome, replacing: Bool = false) -> Bool {
        switch state {
        case .pending:
            state = .resolved(outcome)
            return true
        case .resolved:
            if replacing { state = .resolved(outcome) }
            return false
        case .done:
            return false
        }
    }

    /// The owner ended: stop the work and deliver nothing.
    func cancel() {
        guard !isDone else { return }
        finish()
    }

    /// Marks the request done and lets go of everything it held.
    func finish() {
        let previous = state
        state = .done
        swiftTask?.cancel()
        swiftTask = nil
        // Work that has not answered yet is told to stop; an answered one has nothing to stop.
        if case .pending = previous { reply?.cancel() }
        reply = nil
        replyAnswer?.drop()
        replyAnswer = nil
        completion = nil
        waitingTask = nil
        binding?.requests.remove(self)
        owner?.forget(self)
    }

    static func == (lhs: ServiceRequest, rhs: ServiceRequest) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
