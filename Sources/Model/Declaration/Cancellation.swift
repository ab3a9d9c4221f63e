import Synchronization

/// A cancel that may come before or after the work it stops is known: the handler given to
/// ``onCancel(_:)`` runs exactly once, whichever of the two comes first, on the thread that came
/// second. Safe from any thread.
///
/// ```swift
/// let cancellation = Cancellation()
/// cancellation.onCancel { task.cancel() }   // when the work starts
/// cancellation.cancel()                     // from the caller, at any time
/// ```
public final class Cancellation: Sendable {
    private let cancelled = Atomic<Bool>(false)
    private let handler = Mutex<(@Sendable () -> Void)?>(nil)

    public init() {}

    /// True once ``cancel()`` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Cancels: runs the handler, if one was given, once. Later calls do nothing.
    public func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        takeHandler()?()
    }

    /// Gives what stops the work: it runs at the cancel, or at once when the cancel came first.
    public func onCancel(_ stop: @escaping @Sendable () -> Void) {
        handler.withLock { $0 = stop }
        // A cancel that came first found no handler: take it back and run it here.
        if cancelled.load(ordering: .acquiring), let late = takeHandler() { late() }
    }

    /// Lets go of the handler without running it: the work it would stop is over, and what it
    /// holds (often the work's own completion, and through it the caller) must not stay allocated.
    public func dropHandler() { _ = takeHandler() }

    private func takeHandler() -> (@Sendable () -> Void)? {
        handler.withLock { handler in
            defer { handler = nil }
            return handler
        }
    }
}
