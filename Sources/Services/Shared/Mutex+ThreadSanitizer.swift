#if THREAD_SANITIZER
import Model

/// Under ThreadSanitizer this module's `Mutex` is Model's `SanitizedMutex` (why there).
typealias Mutex<Value: ~Copyable> = SanitizedMutex<Value>
#endif
