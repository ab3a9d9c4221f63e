import Foundation
import Glibc
import Synchronization

/// The threads that start the process service's programs (``ProgramLaunch/perform()``), so
/// `posix_spawn`'s wait for each child's exec holds none of the host's loop, the reactor that
/// reads the programs' pipes, or each other more than their number. Two: on a small machine
/// more only wait for a CPU; a start's own work is a few hundred microseconds.
///
/// A process that cannot start a thread (`ulimit -u`, or `ulimit -v` nearly reached) starts
/// each program on the thread that queues it, as before there were launch threads: slower for
/// the loop, never a start that waits forever.
final class LaunchThreads: Sendable {
    static let shared = LaunchThreads(count: 2)

    private let queue = Mutex<[ProgramLaunch]>([])
    /// Counts the launches queued and not yet taken.
    private let queued = DispatchSemaphore(value: 0)
    /// How many threads run ``run()``.
    private let threads = Atomic<Int>(0)

    private init(count: Int) {
        for _ in 0..<count {
            var thread = pthread_t()
            // The thread holds the (never released) shared object for its life.
            let context = Unmanaged.passRetained(self).toOpaque()
            let result = pthread_create(&thread, nil, { context in
                guard let context else { return nil }
                Unmanaged<LaunchThreads>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, context)
            if result == 0 {
                pthread_detach(thread)
                threads.add(1, ordering: .relaxed)
            } else {
                Unmanaged<LaunchThreads>.fromOpaque(context).release()
            }
        }
    }

    /// Starts `launch` on one of the threads, soon (in the order queued), or here when there
    /// are none.
    func enqueue(_ launch: ProgramLaunch) {
        guard threads.load(ordering: .relaxed) > 0 else {
            launch.perform()
            return
        }
        queue.withLock { $0.append(launch) }
        queued.signal()
    }

    private func run() {
        while true {
            queued.wait()
            // A launch whose pid was asked for may have started already on the asking thread;
            // perform() is then nothing.
            let launch = queue.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            launch?.perform()
        }
    }
}
