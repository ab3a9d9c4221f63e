import Synchronization

/// One report from a model object: a property took a new value, or an event happened.
public enum ModelChange: Sendable {
    case property(key: String, value: Value)
    case event(name: String, payload: Value)
    /// Events of one name, in the order they happened, reported at once (the lines of one read of
    /// a program's output): delivered as that many events, each as ``event(name:payload:)`` is,
    /// for one report's cost.
    case events(name: String, payloads: [Value])
}

/// Where a model object reports its changes. The host attaches a sink that carries each report
/// to its loop; with no sink attached (nobody can observe yet) reports are dropped.
public final class ChangePublisher: Sendable {
    /// Receives reports, on the thread that made the change.
    public typealias Sink = @Sendable (ModelChange) -> Void

    private let sinks = Mutex<[(id: Int, sink: Sink)]>([])
    private let nextID = Atomic<Int>(0)
    /// Counts the reports waiting for the loop, set by the host that carries them.
    private let backlogProbe = Mutex<(@Sendable () -> Int)?>(nil)

    public init() {}

    /// Attaches a sink; returns the id that detaches it.
    @discardableResult
    public func attach(_ sink: @escaping Sink) -> Int {
        let id = nextID.add(1, ordering: .relaxed).newValue
        sinks.withLock { $0.append((id, sink)) }
        return id
    }

    public func detach(_ id: Int) {
        sinks.withLock { $0.removeAll { $0.id == id } }
    }

    /// Sets what counts the reports made but not yet taken in by the loop (the host's mailbox).
    public func setBacklogProbe(_ probe: (@Sendable () -> Int)?) {
        backlogProbe.withLock { $0 = probe }
    }

    /// How many reports wait for the loop (0 with no host attached): a producer that can wait,
    /// such as a program's output, stops reading while the loop is this far behind, so the
    /// backlog (in memory outside Lua) stays bounded.
    public var backlog: Int {
        backlogProbe.withLock { $0 }?() ?? 0
    }

    /// Reports that property `key` now has `value`.
    public func propertyChanged(_ key: String, to value: Value) {
        publish(.property(key: key, value: value))
    }

    /// Reports event `name` with `payload`.
    public func emit(_ name: String, _ payload: Value = .null) {
        publish(.event(name: name, payload: payload))
    }

    /// Reports events `name`, one per payload in order, as one report (nothing when empty).
    public func emit(_ name: String, payloads: [Value]) {
        guard !payloads.isEmpty else { return }
        publish(.events(name: name, payloads: payloads))
    }

    private func publish(_ change: ModelChange) {
        let current = sinks.withLock { $0 }
        for entry in current { entry.sink(change) }
    }
}
