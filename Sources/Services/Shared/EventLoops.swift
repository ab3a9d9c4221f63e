import Glibc
import Model
import NIOCore
import NIOPosix
import Synchronization

/// An event loop group made on first use only once the file descriptors its loops need are free.
///
/// NIO traps (it cannot throw) when a loop of a new group cannot make its selector: each loop
/// opens an epoll instance, an eventfd and a timerfd, and a process at its `ulimit -n` would die
/// on the first HTTP request, feed fetch or PostgreSQL connection, losing its buffered output.
/// Here the first use opens as many descriptors itself (plus a margin), closes them
/// and only then makes the group; when they cannot all be opened, the call fails with `io` and a
/// later call tries again.
///
/// The check is not atomic with the group's making: between closing the probe's descriptors and
/// the loops opening theirs, another thread of this process could take descriptors. Every group
/// made here is made under one lock, and the probe asks for ``margin`` descriptors beyond the
/// loops' need, so only a thread opening that many files in that instant can still make NIO trap.
///
/// ```swift
/// let group = try EventLoops.shared.group()
/// ```
final class EventLoops: Sendable {
    /// NIO's shared group (``MultiThreadedEventLoopGroup/singleton``), which the http, feeds and
    /// location services' sockets use.
    static let shared = EventLoops(threads: nil)

    /// Descriptors the probe wants free beyond the loops' own.
    static let margin = 8

    /// Every probe and group making, one at a time: two probes passing at once on the same free
    /// descriptors would each think they are free.
    private static let making = Mutex(())

    /// The number of loops of a group of its own; nil: NIO's shared group.
    private let threads: Int?
    private let made = Mutex<MultiThreadedEventLoopGroup?>(nil)

    /// Event loops made on first use: NIO's shared group when `threads` is nil, else a group of
    /// `threads` loops of its own (kept for the life of the process).
    init(threads: Int?) {
        self.threads = threads
    }

    /// The group, made now if it is not yet.
    ///
    /// - Throws: `io` when the process has too few free file descriptors for its loops.
    func group() throws(ServiceError) -> MultiThreadedEventLoopGroup {
        if let group = made.withLock({ $0 }) { return group }
        return try Self.making.withLock { _ throws(ServiceError) -> MultiThreadedEventLoopGroup in
            if let group = made.withLock({ $0 }) { return group }
            let loops = threads ?? NIOSingletons.groupLoopCountSuggestion
            try Self.probe(loops: loops)
            try Self.probeThreads(loops + 1)
            let group = threads.map { MultiThreadedEventLoopGroup(numberOfThreads: $0) } ?? MultiThreadedEventLoopGroup.singleton
            made.withLock { $0 = group }
            return group
        }
    }

    /// Starts and joins `count` threads (see ``ThreadShortage/probe(_:for:)``), so a process that
    /// cannot start another thread gets `io` here instead of NIO's trap ("Unable to create thread").
    static func probeThreads(_ count: Int) throws(ServiceError) {
        if let shortage = ThreadShortage.probe(count, for: "the network event loops") {
            throw ServiceError(.io, shortage)
        }
    }

    /// Opens as many descriptors as `loops` loops open, and ``margin`` more, then closes them. The
    /// probe opens `/dev/null`: what runs out (the process's `ulimit -n`, the system's file table)
    /// counts descriptors of every kind alike.
    static func probe(loops: Int) throws(ServiceError) {
        var opened: [CInt] = []
        defer { for descriptor in opened { close(descriptor) } }
        let needed = loops * 3 + margin
        for free in 0..<needed {
            let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                let cause = String(cString: strerror(errno))
                throw ServiceError(.io, "cannot start the network event loops: \(cause) (they need \(needed) free file "
                                   + "descriptors and \(free) are free): close files, or raise the limit (ulimit -n)")
            }
            opened.append(descriptor)
        }
    }
}
