import Foundation
import Glibc
import Model
@testable import Services
import Synchronization
import Testing

/// A gpsd that sends a line of 64 MB before its next report (issue 32: a 200 MB line stalled the
/// host): the line is dropped whole and reported, and the report after it arrives.
@Suite struct GpsdLongLineTests {
    static let report = #"{"class":"TPV","mode":3,"time":"2024-06-15T12:00:11.000Z","lat":48.9666,"lon":2.3522,"alt":35.0}"# + "\n"

    @Test func aLineTooLongIsDroppedReportedAndTheNextReportRead() async throws {
        let server = try LongLineServer(lineBytes: 64 << 20, then: Self.report)
        defer { server.stop() }
        let service = LocationService(provider: GpsdProvider(host: "127.0.0.1", port: server.port), clock: SystemClock.shared)
        let events = ModelEvents(service)
        service.startUpdates(shares: [.null])
        defer { service.stopUpdates() }
        #expect(await events.wait(seconds: 60) { $0.fixes.count == 1 }, "\(events.payloads("didFail"))")
        #expect(events.fixes.first?["lat"] == .number(48.9666), "\(events.fixes)")
        let messages = events.payloads("didFail").compactMap { $0["message"].stringValue }
        #expect(events.failures == ["invalid_data"], "\(messages)")
        #expect(messages.first?.contains("sent a line longer than 64 KiB; it was dropped") == true, "\(messages)")
    }
}

/// A loopback listener whose first connection gets `lineBytes` bytes of one JSON-looking line,
/// then `then`, and stays open.
final class LongLineServer: Sendable {
    let port: Int
    private let descriptor: Int32
    private let connection = Atomic<Int32>(-1)

    init(lineBytes: Int, then tail: String) throws {
        let listener = try ClosingListener.listenOnLoopback(backlog: 4)
        descriptor = listener.descriptor
        port = listener.port
        Thread { [self] in
            let client = accept(descriptor, nil, nil)
            guard client >= 0 else { return }
            connection.store(client, ordering: .relaxed)
            let head = Array(#"{"class":"TPV","device":""#.utf8)
            _ = head.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
            var sent = 0
            while sent < lineBytes {
                let count = chunk.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard count > 0 else { return }
                sent += count
            }
            let rest = Array(("\"}\n" + tail).utf8)
            _ = rest.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }.start()
    }

    func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
        let client = connection.exchange(-1, ordering: .relaxed)
        if client >= 0 { close(client) }
    }
}
