import Glibc

/// Whether the process can start more threads, and when it cannot, what ran out.
///
/// `pthread_create` says EAGAIN both at the user's process limit (`ulimit -u`, which counts
/// every process and thread of the user) and when a thread's stack does not fit under the
/// memory limits (`ulimit -v`, `ulimit -d`); the message names those that are set. A thread
/// libdispatch cannot start it retries for ever, deaf to signals, so the host checks with its
/// own threads before it needs Dispatch's.
///
/// ```swift
/// if let shortage = ThreadShortage.probe(4, for: "the run's threads") { print(shortage) }
/// ```
public enum ThreadShortage {
    /// Starts `count` threads with default attributes, all before any is joined (as they would
    /// run side by side), and joins them; nil when all started, else why not (see
    /// ``message(_:starting:)``).
    public static func probe(_ count: Int, for what: String) -> String? {
        var started: [pthread_t] = []
        defer { for thread in started { pthread_join(thread, nil) } }
        for _ in 0..<count {
            var thread = pthread_t()
            let result = pthread_create(&thread, nil, { _ in nil }, nil)
            guard result == 0 else {
                return message(result, starting: count == 1 ? what : "\(what) (\(count) threads; \(started.count) could be started)")
            }
            started.append(thread)
        }
        return nil
    }

    /// Why `what` could not be started with `pthread_create`'s `code`: the limits that can cause
    /// it and their values, and the fix.
    public static func message(_ code: Int32, starting what: String) -> String {
        var causes: [String] = []
        if let processes = soft(__RLIMIT_NPROC) {
            causes.append("the process limit is \(processes) (ulimit -u), and it counts every process and thread of this user")
        }
        if let bytes = soft(RLIMIT_AS) {
            causes.append("the virtual memory limit is \(bytes / 1024) KiB (ulimit -v), and each thread's stack takes part of it")
        }
        if let bytes = soft(RLIMIT_DATA) {
            causes.append("the data size limit is \(bytes / 1024) KiB (ulimit -d), and each thread's stack takes part of it")
        }
        let cause = causes.isEmpty ? "the system is out of threads or memory (kernel.threads-max)" : causes.joined(separator: "; ")
        let fix = causes.isEmpty ? "end other programs" : "raise the limit, or end other programs of this user"
        return "cannot start \(what): \(String(cString: strerror(code))): \(cause); \(fix)"
    }

    /// The soft limit of `resource`; nil when there is none.
    static func soft(_ resource: __rlimit_resource) -> rlim_t? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(resource.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return limit.rlim_cur
    }
}
