import Synchronization

/// The one answer to a call of a method declared with `replying:`: the service calls it exactly
/// once, at once on the loop or later from any thread (its own queue), with the result or an error.
///
/// A service that keeps work of its own (a database writer) answers through a reply rather than
/// in a Swift task, so a call that can be done at once costs no thread hop, and one that cannot
/// costs one hop each way. Calls after the first are ignored.
///
/// ```swift
/// d.method("save", [.init("text", .string, "What to save.")], returns: "true", "Saves text.",
///          replying: { notes, arguments, reply in
///              notes.queue.async { reply(notes.save(arguments[0])) }
///          })
/// ```
public final class Reply: Sendable {
    private let deliver: @Sendable (Result<Value, ServiceError>) -> Void
    private let answered = Atomic<Bool>(false)
    private let cancellation = Cancellation()
    /// ``State``'s raw value: whether the caller cancelled first or the work took effect first.
    private let state = Atomic<UInt8>(State.pending.rawValue)

    private enum State: UInt8 {
        case pending, cancelled, committed
    }

    /// A reply that hands its one answer to `deliver` (the host does this for each call).
    public init(_ deliver: @escaping @Sendable (Result<Value, ServiceError>) -> Void) {
        self.deliver = deliver
    }

    /// Answers with `result`; only the first answer counts.
    public func callAsFunction(_ result: Result<Value, ServiceError>) {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        deliver(result)
        // Nothing is left to stop. The handler usually holds the work, whose completion holds
        // this reply: kept, that cycle outlived every answered call (an HTTP request's exchange,
        // its client task and response, found by LeakSanitizer under `make sanitize`).
        cancellation.dropHandler()
    }

    /// True once the caller has cancelled: work that has not started yet need not start (the
    /// caller hears `cancelled` whatever the reply says).
    public var isCancelled: Bool { cancellation.isCancelled }

    /// Marks the call cancelled (the host does this for `Request:cancel()` and ended owners) and
    /// runs the handler given to ``onCancel(_:)``, once. Returns false, changing nothing, when the
    /// work has already taken effect (``commit()``): `cancelled` must mean "not done", so the
    /// caller then hears the work's own answer.
    @discardableResult
    public func cancel() -> Bool {
        let (exchanged, original) = state.compareExchange(expected: State.pending.rawValue, desired: State.cancelled.rawValue,
                                                          ordering: .acquiringAndReleasing)
        guard exchanged || original == State.cancelled.rawValue else { return false }
        cancellation.cancel()
        return true
    }

    /// Called by work with a lasting effect (a database write) at the one moment it becomes
    /// lasting (just before its commit): true when it may go on; false when the caller cancelled
    /// first, and the work must then undo itself and answer `cancelled`. After it returned
    /// true, ``cancel()`` no longer cancels.
    public func commit() -> Bool {
        let (exchanged, original) = state.compareExchange(expected: State.pending.rawValue, desired: State.committed.rawValue,
                                                          ordering: .acquiringAndReleasing)
        return exchanged || original == State.committed.rawValue
    }

    /// Stops work in flight when the caller cancels: `stop` runs once, from the thread that
    /// cancels, or at once when the call is already cancelled.
    /// Once the call is answered, `stop` is not kept (there is nothing left to stop).
    public func onCancel(_ stop: @escaping @Sendable () -> Void) {
        guard !answered.load(ordering: .acquiring) else { return }
        cancellation.onCancel(stop)
        // An answer that came in between found no handler to drop.
        if answered.load(ordering: .acquiring) { cancellation.dropHandler() }
    }
}
