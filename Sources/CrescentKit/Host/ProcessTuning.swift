import CPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide settings for an executable whose work is a host: made once, at its start, before
/// any thread allocates. A library embedding a host leaves the process as its owner set it.
public enum ProcessTuning {
    /// The smallest data and address-space limits (`ulimit -d`, `ulimit -v`) under which malloc's
    /// heaps grow in large steps. Each heap (the main one and one per thread that allocates)
    /// then takes its whole 64 MiB pad of writable memory at once, which counts against those
    /// limits whether touched or not: under `ulimit -d 100000` the pads and the executable's own
    /// data left no room for a thread's stack, and the run hung (libdispatch retries a thread it
    /// cannot make for ever, deaf to SIGTERM) or aborted (`std::bad_alloc`).
    static let paddedHeapsNeed: rlim_t = 4 << 30

    /// Lets malloc's heaps grow in large steps (see `crescent_tune_allocator`): a script that
    /// builds many tables otherwise spends a tenth of its time in mprotect. Not under a data or
    /// address-space limit below ``paddedHeapsNeed``, where the pads would take the room.
    ///
    /// Under such a limit, large blocks stay mapped on their own, so what a script frees (a
    /// memory bomb caught by `pcall`) goes back at once and a thread can still be started after.
    public static func apply() {
        guard limit(RLIMIT_DATA) >= paddedHeapsNeed, limit(RLIMIT_AS) >= paddedHeapsNeed else {
            crescent_keep_large_blocks_mapped()
            return
        }
        crescent_tune_allocator()
    }

    /// The soft limit of `resource` in bytes (the largest value when there is none: RLIM_INFINITY is all ones).
    static func limit(_ resource: __rlimit_resource) -> rlim_t {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(resource.rawValue), &limit) == 0 else { return rlim_t.max }
        return limit.rlim_cur
    }
}
