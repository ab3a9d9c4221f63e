import Glibc
import Model
import NIOCore
import NIOPosix
import Synchronization

/// Fixes from gpsd over TCP, in its JSON protocol: after connecting it sends
/// `?WATCH={"enable":true,"json":true}` and turns each `TPV` report with a 2D or 3D fix
/// (`mode` ≥ 2) into a fix (``fix(from:)``); fixes that arrive together are reported together.
///
/// While gpsd cannot be reached (refused, closed, unknown host) it reports `unavailable` once per
/// outage (`io` when the process has too few free descriptors for the event loops) and reconnects
/// with backoff (0.25 s doubling to 5 s); fixes resume when gpsd is back.
struct GpsdProvider: LocationProvider {
    /// gpsd's own default address.
    static let defaultHost = "127.0.0.1"
    static let defaultPort = 2947
    static let watch = #"?WATCH={"enable":true,"json":true}"# + "\n"

    let name = "gpsd"
    let host: String
    let port: Int
    var backoff = Backoff()

    var source: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    func run(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async {
        var backoff = backoff
        var failing = false
        while !Task.isCancelled {
            let outcome: String
            var code = ServiceError.Code.unavailable
            do {
                try await session({ fixes in
                    failing = false
                    backoff.reset()
                    report(.fixes(fixes))
                }, dropped: {
                    report(.failed(ServiceError(.invalidData, "gpsd at \(source) sent a line longer than 64 KiB; it was dropped "
                        + "and the reports after it are read")))
                })
                outcome = "gpsd at \(source) closed the connection"
            } catch let error as ServiceError {
                // Too few free descriptors for the event loops: `io`, as for the other services.
                code = error.code
                outcome = "cannot reach gpsd at \(source): \(error.message)"
            } catch {
                outcome = "cannot reach gpsd at \(source): \(Self.describe(error))"
            }
            guard !Task.isCancelled else { return }
            if !failing { report(.failed(ServiceError(code, outcome + ". " + Self.otherProviders))) }
            failing = true
            guard await Self.wait(backoff.advance(), on: clock) else { return }
        }
    }

    /// What a person without a GPS receiver can do instead, said whenever gpsd cannot be used
    /// (it is the default provider, so this is the first failure a newcomer meets).
    static let otherProviders = "Start gpsd, or choose another provider with --location fixed:LAT,LON (a fixed point), "
        + "gpx:FILE (a track replayed) or nmea:FILE, or with provider under [location] in crescent.toml"

    /// Waits `delay` on the clock's scheduler (the host's running loop); false when cancelled. Not
    /// a task sleep: one started while the process has no free descriptors never woke (the
    /// timer it needs could not be made), so gpsd was never tried again.
    static func wait(_ delay: Duration, on clock: any ServiceClock) async -> Bool {
        let waiter = Waiter()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiter.start(continuation, clock.schedule(after: delay) { waiter.finish(true) })
            }
        } onCancel: {
            waiter.finish(false)
        }
    }

    /// One wait's continuation, resumed once: by its timer or by cancellation.
    private final class Waiter: Sendable {
        private struct Pending {
            var continuation: CheckedContinuation<Bool, Never>?
            var timer: Cancellation?
            var outcome: Bool?
        }
        private let pending = Mutex(Pending())

        func start(_ continuation: CheckedContinuation<Bool, Never>, _ timer: Cancellation) {
            let early = pending.withLock { pending -> Bool? in
                if let outcome = pending.outcome { return outcome }
                pending.continuation = continuation
                pending.timer = timer
                return nil
            }
            if let early {
                timer.cancel()
                continuation.resume(returning: early)
            }
        }

        func finish(_ outcome: Bool) {
            let (continuation, timer) = pending.withLock { pending in
                guard pending.outcome == nil else { return (CheckedContinuation<Bool, Never>?.none, Cancellation?.none) }
                pending.outcome = outcome
                defer { pending.continuation = nil; pending.timer = nil }
                return (pending.continuation, pending.timer)
            }
            if !outcome { timer?.cancel() }
            continuation?.resume(returning: outcome)
        }
    }

    /// One connection: watch, then read reports until gpsd closes it or the task is cancelled.
    /// `dropped` hears of each line too long to read (dropped whole, the reading goes on).
    private func session(_ deliver: ([LocationFix]) -> Void, dropped: () -> Void) async throws {
        let channel = try await ClientBootstrap(group: EventLoops.shared.group())
            .connectTimeout(.seconds(5))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await withTaskCancellationHandler {
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: Self.watch))
                var lines = LineSplitter()
                var last: (time: Double, mode: Int64)?
                for try await buffer in inbound {
                    var fixes: [LocationFix] = []
                    let dropsBefore = lines.dropped
                    for line in lines.append(buffer) {
                        guard let report = try? Value(jsonText: line), let fix = Self.fix(from: report) else { continue }
                        // gpsd may report one time twice (a 2D fix from RMC, then the 3D one from GGA):
                        // a repeat is reported only when it is the better fix.
                        let mode = report["mode"].integerValue ?? 2
                        if let last, last.time == fix.time, last.mode >= mode { continue }
                        last = (fix.time, mode)
                        fixes.append(fix)
                    }
                    if lines.dropped > dropsBefore { dropped() }
                    if !fixes.isEmpty { deliver(fixes) }
                }
            }
        } onCancel: {
            channel.channel.close(promise: nil)
        }
    }

    /// The fix in a gpsd report: a `TPV` with `mode` ≥ 2, numeric `lat` and `lon` and a `time`
    /// (gpsd leaves the time out until it knows the date; such reports are skipped). Altitude is
    /// `altMSL` (or the older `alt`, else `altHAE`), speed `speed`, course `track`, accuracy `eph`
    /// (else the larger of `epx` and `epy`).
    static func fix(from report: Value) -> LocationFix? {
        guard report["class"].stringValue == "TPV", let mode = report["mode"].integerValue, mode >= 2,
              let latitude = report["lat"].doubleValue, let longitude = report["lon"].doubleValue,
              let time = report["time"].stringValue.flatMap(CivilTime.parseISO8601)
        else { return nil }
        let altitude = mode >= 3 ? (report["altMSL"].doubleValue ?? report["alt"].doubleValue ?? report["altHAE"].doubleValue) : nil
        let horizontal = [report["epx"].doubleValue, report["epy"].doubleValue].compactMap { $0 }.max()
        let fix = LocationFix(
            latitude: latitude, longitude: longitude, altitude: altitude,
            speed: report["speed"].doubleValue, course: report["track"].doubleValue,
            accuracy: report["eph"].doubleValue ?? horizontal,
            time: time,
            provider: "gpsd"
        )
        return fix.isValid ? fix : nil
    }

    /// `connection refused`, `cannot resolve gps.example`, `connect timeout`: the cause, briefly.
    static func describe(_ error: any Error) -> String {
        var cause = error
        if let connection = error as? NIOConnectionError {
            if let first = connection.connectionErrors.first {
                cause = first.error
            } else if connection.dnsAError != nil || connection.dnsAAAAError != nil {
                return "cannot resolve \(connection.host)"
            }
        }
        if let io = cause as? IOError { return String(cString: strerror(io.errnoCode)).lowercased() }
        return "\(cause)"
    }
}
