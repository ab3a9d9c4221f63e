import Foundation
import Glibc
import Model
@testable import Services
import Synchronization
import Testing

/// gpsd's reconnect backoff on the manual clock: a real TCP listener on 127.0.0.1 that takes each
/// connection and closes it at once, so every attempt is counted and none waits in real time.
@Suite struct GpsdBackoffTests {
    @Test func reconnectsDoubleTheirWaitUpToTheCapAndFailOncePerOutage() async throws {
        let listener = try ClosingListener()
        defer { listener.stop() }
        let clock = ManualClock()
        let service = LocationService(provider: GpsdProvider(host: "127.0.0.1", port: listener.port), clock: clock)
        let events = ModelEvents(service)
        service.startUpdates(shares: [.null])
        defer { service.stopUpdates() }
        #expect(await eventually { listener.accepted == 1 })
        // 0.25 s doubling to 5 s: each wait is a job of the clock, the next attempt comes when it runs.
        var waits: [Duration] = []
        for attempt in 2...8 {
            #expect(await clock.waitForJob(), "attempt \(attempt)")
            let due = try #require(clock.nextDue)
            waits.append(due - clock.uptime)
            clock.advance(by: due - clock.uptime - .milliseconds(1))
            #expect(listener.accepted == attempt - 1, "not before the wait is over")
            clock.advance(by: .milliseconds(1))
            #expect(await eventually { listener.accepted == attempt }, "attempt \(attempt)")
        }
        #expect(waits == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
        #expect(events.failures == ["unavailable"], "one didFail for the whole outage")
        service.stopUpdates()
        #expect(await clock.advanceJobs { clock.pendingCount == 0 }, "stopping ends the waits")
    }
}

/// A loopback TCP listener that accepts each connection and closes it, counting them.
final class ClosingListener: Sendable {
    let port: Int
    private let descriptor: Int32
    private let count = Atomic<Int>(0)

    init() throws {
        let listener = try Self.listenOnLoopback()
        descriptor = listener.descriptor
        port = listener.port
        Thread { [self] in
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                count.add(1, ordering: .relaxed)
                close(connection)
            }
        }.start()
    }

    /// A TCP socket listening on 127.0.0.1 at a free port, and the port.
    static func listenOnLoopback(backlog: Int32 = 16) throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ServiceError(.io, "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
                    && listen(descriptor, backlog) == 0
            }
        }
        guard listening else {
            close(descriptor)
            throw ServiceError(.io, "cannot listen on 127.0.0.1")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Connections taken so far.
    var accepted: Int { count.load(ordering: .relaxed) }

    /// Stops listening (the accepting thread ends).
    func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
    }
}
