import CPlatform
import Foundation

/// Runs every thread of this process on one processor while a row measures a round trip between
/// threads, then gives each thread back the processors it had.
///
/// A round trip over a socket between two threads costs several times more when the scheduler
/// puts them on different processors (each wake-up crosses to the other one) than on one, and
/// where it puts them changes from run to run: on this 2-core machine the same row measured from
/// 1.2 to 3.4 times its baseline unpinned. With both sides pinned alike, a row compares the work
/// done per round trip instead of where the threads happened to land.
enum ThreadPinning {
    /// Pins the threads that exist now to the first processor this process may use, runs
    /// `body`, and restores each thread's own processors.
    static func onOneProcessor<Output, Failure: Error>(_ body: () throws(Failure) -> Output) throws(Failure) -> Output {
        let size = crescent_affinity_size()
        var original: [(thread: Int32, mask: [UInt8])] = []
        for thread in threadIDs() {
            var mask = [UInt8](repeating: 0, count: size)
            if crescent_get_affinity(thread, &mask) == 0 { original.append((thread, mask)) }
        }
        guard let first = original.first?.mask.firstIndex(where: { $0 != 0 }) else { return try body() }
        var one = [UInt8](repeating: 0, count: size)
        let bit = original[0].mask[first].trailingZeroBitCount
        one[first] = UInt8(1 << bit)
        for entry in original { _ = crescent_set_affinity(entry.thread, one) }
        defer {
            for entry in original { _ = crescent_set_affinity(entry.thread, entry.mask) }
        }
        return try body()
    }

    /// The ids of this process's threads, from `/proc/self/task`.
    private static func threadIDs() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap { Int32($0) }
    }
}
