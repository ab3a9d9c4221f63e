import Foundation
import Synchronization

/// The threads that start the process service's programs (``ProgramLaunch/perform()``), so
/// `posix_spawn`'s wait for each child's exec holds none of the host's loop, the reactor that
/// reads the programs' pipes, or each other more than their number. Two: on a small machine
/// more only wait for a CPU; a start's own work is a few hundred microseconds.
final class LaunchThreads: Sendable {
    static let shared = LaunchThreads(count: 2)

    private let queue = Mutex<[ProgramLaunch]>([])
    /// Counts the launches queued and not yet taken.
    private let queued = DispatchSemaphore(value: 0)

    private init(count: Int) {
        for index in 0..<count {
            let thread = Thread { [self] in run() }
            thread.name = "crescent.launch.\(index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Starts `launch` on one of the threads, soon (in the order queued).
    func enqueue(_ launch: ProgramLaunch) {
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
