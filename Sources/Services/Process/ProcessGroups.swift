import Glibc
import Synchronization

/// The process groups of every program the process service has started and not yet reaped, by
/// the leader's pid: the host's exit, by any path that runs code (a return from `main`, `exit`,
/// `app.exit`, a forced exit after a signal), kills each whole group, so nothing a script started
/// outlives it.
///
/// A group is removed before its leader is reaped: until then the leader is at most a zombie,
/// so its pid still names the group and no other process can have taken that number.
public enum ProcessGroups {
    private static let live = Mutex<Set<pid_t>>([])
    /// Set once ``killAll()`` is registered with `atexit` (on the first group).
    private static let exitHookRegistered = Atomic<Bool>(false)

    /// Records that `pid` leads a group of its own.
    static func add(_ pid: pid_t) {
        if !exitHookRegistered.exchange(true, ordering: .acquiringAndReleasing) {
            atexit { _ = ProcessGroups.killAll() }
        }
        live.withLock { _ = $0.insert(pid) }
    }

    /// Sends `signal` to the group `pid` leads, at once, from any thread, unless its leader has
    /// been reaped (its number may be another process's by then); false when it was not sent.
    /// The reaper removes the pid under the same lock before it reaps, so the two cannot cross.
    @discardableResult
    static func signal(_ pid: pid_t, _ signal: Int32) -> Bool {
        live.withLock { groups in
            guard groups.contains(pid) else { return false }
            kill(-pid, signal)
            return true
        }
    }

    /// Forgets `pid`, before it is reaped.
    static func remove(_ pid: pid_t) {
        live.withLock { _ = $0.remove(pid) }
    }

    /// How many groups run now.
    public static var count: Int { live.withLock { $0.count } }

    /// Kills every group still running with SIGKILL and returns how many there were.
    @discardableResult
    public static func killAll() -> Int {
        live.withLock { groups in
            for pid in groups { kill(-pid, SIGKILL) }
            defer { groups.removeAll() }
            return groups.count
        }
    }
}
