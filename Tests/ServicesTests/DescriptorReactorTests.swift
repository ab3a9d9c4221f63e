import Foundation
import Glibc
import Synchronization
import Testing
@testable import Services

/// `DescriptorReactor`, the one thread of the process and files services: jobs submitted from
/// any thread run there, one at a time, and a watched descriptor's handler runs there too. The
/// state it keeps unlocked (its watch table, every `ChildProcess` and `InotifyWatch`) relies on
/// that; under `make sanitize` (thread) a job or handler running anywhere else, or two at once,
/// is a reported data race on the unlocked counter below.
@Suite struct DescriptorReactorTests {
    /// A tally only the reactor thread touches (what the reactor promises its own state).
    final class ReactorTally: @unchecked Sendable {
        // @unchecked: written by jobs and handlers only, which the reactor runs on its one thread.
        var jobs = 0
        var foreign = 0
        var bytes: [UInt8] = []
        /// The thread the first note came from; every later one must come from it too.
        var thread: pthread_t?
        func note() {
            jobs += 1
            let current = pthread_self()
            if let thread, pthread_equal(thread, current) == 0 { foreign += 1 }
            if thread == nil { thread = current }
        }
    }

    @Test func jobsFromManyThreadsRunOnTheReactorThreadOneAtATime() {
        let reactor = DescriptorReactor.shared
        let tally = ReactorTally()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<500 { reactor.submit { tally.note() } }
        }
        let done = DispatchSemaphore(value: 0)
        reactor.submit { done.signal() }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let (jobs, foreign) = reactorRead(reactor) { (tally.jobs, tally.foreign) }
        #expect(jobs == 4_000)
        #expect(foreign == 0)
    }

    @Test func aWatchedPipesHandlerRunsOnTheReactorThreadUntilUnwatched() throws {
        let reactor = DescriptorReactor.shared
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
        let tally = ReactorTally()
        let arrived = DispatchSemaphore(value: 0)
        reactor.submit {
            reactor.watch(readEnd, events: Int16(POLLIN)) { _ in
                tally.note()
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = read(readEnd, &buffer, buffer.count)
                if count > 0 { tally.bytes += buffer[..<count] }
                if tally.bytes.count >= 3 {
                    reactor.unwatch(readEnd)
                    arrived.signal()
                }
            }
        }
        for byte in [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "c")] {
            var byte = byte
            #expect(write(writeEnd, &byte, 1) == 1)
        }
        #expect(arrived.wait(timeout: .now() + 30) == .success)
        let (bytes, foreign) = reactorRead(reactor) { (tally.bytes, tally.foreign) }
        #expect(bytes == Array("abc".utf8))
        #expect(foreign == 0)
    }

    /// Reads what only the reactor thread writes, on that thread.
    private func reactorRead<Result: Sendable>(_ reactor: DescriptorReactor, _ body: @escaping @Sendable () -> Result) -> Result {
        let result = Mutex<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        reactor.submit {
            result.withLock { $0 = body() }
            done.signal()
        }
        done.wait()
        // Invariant: the job above set it before signalling.
        return result.withLock { $0! }
    }
}
