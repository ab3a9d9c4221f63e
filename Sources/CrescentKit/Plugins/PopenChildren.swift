import Services
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The programs a Lua plugin's `io.popen` started and may still be running, held by pidfd so a
/// signal reaches that process and never another that took its pid after it was reaped (the
/// reaping is `io.popen`'s close, in C, on the loop). Past a call's time limit they are killed:
/// a method blocked reading a program that never ends (`io.popen("sleep 40"):read("a")`) holds
/// the loop in C, where no interrupt reaches, until its program ends.
final class PopenChildren: Sendable {
    private let descriptors = Mutex<[Int32]>([])

    /// Records `pid`, a program just started; forgets those that have ended (a pidfd reads ready
    /// once its process has exited), so a plugin that runs many keeps a few descriptors only.
    func add(_ pid: pid_t) {
        let descriptor = SystemCalls.pidfdOpen?(pid, 0) ?? -1
        descriptors.withLock { descriptors in
            descriptors.removeAll { descriptor in
                var ended = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&ended, 1, 0) > 0 else { return false }
                close(descriptor)
                return true
            }
            if descriptor >= 0 { descriptors.append(descriptor) }
        }
    }

    /// Kills every program still recorded (from any thread: the time limit's watchdog).
    func killAll() {
        let all = descriptors.withLock { descriptors in
            defer { descriptors.removeAll() }
            return descriptors
        }
        for descriptor in all {
            _ = SystemCalls.pidfdSendSignal?(descriptor, SIGKILL, nil, 0)
            close(descriptor)
        }
    }

    deinit {
        descriptors.withLock { descriptors in
            for descriptor in descriptors { close(descriptor) }
        }
    }
}
