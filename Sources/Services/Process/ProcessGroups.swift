import CExitGuard
import Glibc
import Synchronization

/// The process groups of every program started through ``ProcessLauncher`` (the process
/// service's, and the process plugins' with the plugin's name) and not yet reaped, by the
/// leader's pid: the host's exit, by any path that runs code (a return from `main`, `exit`,
/// `app.exit`, a forced exit after a signal), kills each whole group, so nothing a script or a
/// plugin started outlives it. A fatal signal that runs no Swift (SIGQUIT, SIGUSR1, SIGXCPU, a
/// crash) kills them too: the pids are mirrored in CExitGuard's table, whose handler kills each
/// group before the process dies of the signal.
///
/// A program started off the loop is in the C table from the moment its `posix_spawn` returns,
/// and a fatal signal's handler waits for a start under way (see ``ProcessLauncher/start(_:)``),
/// so none escapes in between.
///
/// A group is removed before its leader is reaped: until then the leader is at most a zombie,
/// so its pid still names the group and no other process can have taken that number.
public enum ProcessGroups {
    /// The groups by leader, with the plugin that runs each (nil for the process service's).
    private static let live = Mutex<[pid_t: String?]>([:])
    /// Set once ``killAll()`` is registered with `atexit` (on the first group).
    private static let exitHookRegistered = Atomic<Bool>(false)

    /// Records that `pid` leads a group of its own, run by `owner` (a plugin's name) when given.
    static func add(_ pid: pid_t, owner: String? = nil) {
        if !exitHookRegistered.exchange(true, ordering: .acquiringAndReleasing) {
            atexit { _ = ProcessGroups.killAll() }
            crescent_exit_guard_install()
        }
        live.withLock {
            $0[pid] = .some(owner)
            _ = crescent_exit_guard_add_group(pid)
        }
    }

    /// Sends `signal` to the group `pid` leads, at once, from any thread, unless its leader has
    /// been reaped (its number may be another process's by then); false when it was not sent.
    /// The reaper removes the pid under the same lock before it reaps, so the two cannot cross.
    @discardableResult
    static func signal(_ pid: pid_t, _ signal: Int32) -> Bool {
        live.withLock { groups in
            guard groups[pid] != nil else { return false }
            kill(-pid, signal)
            return true
        }
    }

    /// Forgets `pid`, before it is reaped.
    public static func remove(_ pid: Int32) {
        live.withLock {
            crescent_exit_guard_remove_group(pid)
            _ = $0.removeValue(forKey: pid)
        }
    }

    /// How many groups run now.
    public static var count: Int { live.withLock { $0.count } }

    /// Kills every group still running with SIGKILL and returns the plugins whose groups they
    /// were, sorted (for the message of a forced exit). The host is ending: a program whose
    /// start is under way on a launch thread (``ProgramLaunch``) is waited for, and one started
    /// from now on is killed as its group is added (CExitGuard's table does both).
    @discardableResult
    public static func killAll() -> [String] {
        // Not under the lock: a start under way takes it to add its group.
        crescent_exit_guard_kill_groups()
        return live.withLock { groups in
            for pid in groups.keys {
                kill(-pid, SIGKILL)
                crescent_exit_guard_remove_group(pid)
            }
            defer { groups.removeAll() }
            return Set(groups.values.compactMap { $0 }).sorted()
        }
    }
}
