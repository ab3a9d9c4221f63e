import Synchronization

/// A typed, thread-safe property of a model object that reports every change it takes.
///
/// Only the owning object changes it (``set(_:)``); consumers read it through the interface.
///
/// ```swift
/// let updating = Property("updating", false, changes)
/// updating.set(true)          // observers see the change on a later loop turn
/// ```
public final class Property<Wrapped: ValueConvertible>: Sendable {
    public let key: String
    private let storage: Mutex<Wrapped>
    private let publisher: ChangePublisher

    public init(_ key: String, _ initial: Wrapped, _ publisher: ChangePublisher) {
        self.key = key
        storage = Mutex(initial)
        self.publisher = publisher
    }

    /// The current value.
    public var value: Wrapped { storage.withLock { $0 } }

    /// Sets a new value and reports it.
    public func set(_ newValue: Wrapped) {
        // Reported under the lock, so reports arrive in the order the changes were made.
        storage.withLock { value in
            value = newValue
            publisher.propertyChanged(key, to: newValue.value)
        }
    }

    /// Changes the value in place and reports the result.
    @discardableResult
    public func update<Result>(_ change: (inout Wrapped) throws -> Result) rethrows -> Result {
        try storage.withLock { value in
            var copy = value                      // a throwing change leaves the value as it was
            let result = try change(&copy)
            value = copy
            publisher.propertyChanged(key, to: copy.value)
            return result
        }
    }
}
