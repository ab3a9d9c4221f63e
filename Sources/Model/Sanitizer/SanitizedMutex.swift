#if THREAD_SANITIZER
import Glibc

/// The toolchain's `Mutex` in a form ThreadSanitizer can follow: what `Mutex` names in our modules
/// when `make sanitize` builds them for ThreadSanitizer (Package.swift defines `THREAD_SANITIZER`
/// there; each module's `Mutex+ThreadSanitizer.swift` makes the alias), and only then.
///
/// `Synchronization.Mutex` hands a contended lock over in the kernel (`FUTEX_LOCK_PI`,
/// `FUTEX_UNLOCK_PI`) or in the spin loop of `libswiftSynchronization.so`, which is not
/// instrumented. ThreadSanitizer then sees no acquire when a waiting thread gets the lock, and
/// reports the data the lock protects as raced between its two holders: a correct program of two
/// threads appending to one `Mutex<[Int]>` is reported, the same program with a
/// `pthread_mutex_t` is not. A `pthread_mutex_t`, whose lock and unlock ThreadSanitizer
/// intercepts, means the same thing: one holder at a time, each seeing what the one before wrote.
@usableFromInline package final class SanitizedMutex<Value: ~Copyable>: @unchecked Sendable {
    // @unchecked: `value` is read and written only between `lock`'s lock and unlock.
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A lock around `initialValue`.
    @usableFromInline package init(_ initialValue: consuming sending Value) {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
        value = initialValue
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` on the value while holding the lock.
    @usableFromInline package func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value)
    }

    /// Runs `body` on the value if the lock is free now; nil when another thread holds it.
    @usableFromInline package func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard pthread_mutex_trylock(lock) == 0 else { return nil }
        defer { pthread_mutex_unlock(lock) }
        return try body(&value)
    }
}
#endif
