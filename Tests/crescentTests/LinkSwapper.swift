import Foundation
import Synchronization

/// Swaps links in `folder` on a thread of its own until stopped: each name in `links` turns in
/// turn into a link to its target (outside) and a link to `real` (inside), each change one
/// rename, so the name always exists. With `hard`, the links are hard links (the name is then
/// in turn the target's file and `real`'s, a swap of the file itself).
final class LinkSwapper: Sendable {
    let folder: String
    let links: [String: String]
    let hard: Bool
    private let running = Atomic<Bool>(false)
    private let swaps = Atomic<Int>(0)
    private let finished = Atomic<Bool>(false)

    init(folder: String, links: [String: String], hard: Bool = false) {
        self.folder = folder
        self.links = links
        self.hard = hard
    }

    /// Starts swapping for `seconds` once a file exists at `path` (the script under test makes it
    /// when it is ready to be raced), waiting 20 s for it at most.
    func start(seconds: Double, once path: String) {
        Thread.detachNewThread { [self] in
            for _ in 0..<2000 where !FileManager.default.fileExists(atPath: path) { usleep(10000) }
            start(seconds: seconds)
        }
    }

    /// Starts swapping, for at most `seconds`.
    func start(seconds: Double) {
        running.store(true, ordering: .sequentiallyConsistent)
        let until = Date().addingTimeInterval(seconds)
        Thread.detachNewThread { [self] in
            while running.load(ordering: .sequentiallyConsistent) && Date() < until {
                for (name, target) in links {
                    for destination in [target, "real"] {
                        let temporary = folder + "/" + name + ".tmp"
                        unlink(temporary)
                        if hard {
                            link(destination.hasPrefix("/") ? destination : folder + "/" + destination, temporary)
                        } else {
                            symlink(destination, temporary)
                        }
                        rename(temporary, folder + "/" + name)
                        swaps.add(1, ordering: .relaxed)
                    }
                }
            }
            finished.store(true, ordering: .sequentiallyConsistent)
        }
    }

    /// Stops and answers how many swaps were made.
    func stop() -> Int {
        running.store(false, ordering: .sequentiallyConsistent)
        // Bounded: the thread ends within one round.
        for _ in 0..<1000 where !finished.load(ordering: .sequentiallyConsistent) { usleep(1000) }
        return swaps.load(ordering: .relaxed)
    }
}
