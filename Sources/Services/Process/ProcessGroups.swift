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
    /// Registers ``killAll()`` with `atexit` on first use.
    private static let exitHook: Void = {
        atexit { _ = ProcessGroups.killAll() }
    }()

    /// Records that `pid` leads a group of its own.
    static func add(_ pid: pid_t) {
        _ = exitHook
        live.withLock { _ = $0.insert(pid) }
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
