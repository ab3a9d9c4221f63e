import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The process groups of the process plugins' programs that run now, by program pid, with the
/// plugin's name: a forced exit (a second signal, a teardown past its grace period) kills each
/// whole group before the host goes, so no plugin, nor what it started, outlives the host.
enum PluginGroups {
    private static let live = Mutex<[pid_t: String]>([:])

    /// Records that `pid` (a group leader) runs plugin `name`'s program.
    static func add(_ pid: pid_t, plugin name: String) {
        live.withLock { $0[pid] = name }
    }

    /// Forgets `pid`, before it is reaped (its number may be reused then).
    static func remove(_ pid: pid_t) {
        _ = live.withLock { $0.removeValue(forKey: pid) }
    }

    /// Kills every group still running and returns the plugins they ran, sorted.
    static func killAll() -> [String] {
        live.withLock { groups in
            for pid in groups.keys { kill(-pid, SIGKILL) }
            defer { groups.removeAll() }
            return Array(Set(groups.values)).sorted()
        }
    }
}
