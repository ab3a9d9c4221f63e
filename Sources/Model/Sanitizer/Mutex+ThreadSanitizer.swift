#if THREAD_SANITIZER
/// Under ThreadSanitizer this module's `Mutex` is ``SanitizedMutex`` (why there).
@usableFromInline typealias Mutex<Value: ~Copyable> = SanitizedMutex<Value>
#endif
