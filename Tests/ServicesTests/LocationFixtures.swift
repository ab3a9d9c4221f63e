import Foundation
import Glibc
import Model
@testable import Services
import Synchronization
import Testing

/// A seeded random generator (SplitMix64), so random-point tests are reproducible.
struct GeoRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A point uniformly distributed over the sphere.
    mutating func point() -> GeoPoint {
        let z = Double.random(in: -1...1, using: &self)
        return GeoPoint(latitude: asin(z) * 180 / .pi, longitude: Double.random(in: -180..<180, using: &self))
    }
}

/// Everything a model object reports, in order, for tests to wait on and inspect.
final class ModelEvents: Sendable {
    private let changes = Mutex<[ModelChange]>([])

    init(_ object: any ModelObject) {
        object.changes.attach { [weak self] change in self?.record(change) }
    }

    private func record(_ change: ModelChange) { changes.withLock { $0.append(change) } }

    var all: [ModelChange] { changes.withLock { $0 } }

    /// The payloads of event `name`, in order.
    func payloads(_ name: String) -> [Value] {
        all.compactMap { change in
            if case .event(name, let payload) = change { return payload }
            return nil
        }
    }

    /// The values property `key` took, in order.
    func values(_ key: String) -> [Value] {
        all.compactMap { change in
            if case .property(key, let value) = change { return value }
            return nil
        }
    }

    /// The fixes of every `didUpdateLocations`, flattened, in order.
    var fixes: [Value] { payloads("didUpdateLocations").flatMap { $0.arrayValue ?? [] } }

    /// The codes of every `didFail`.
    var failures: [String] { payloads("didFail").compactMap { $0["code"].stringValue } }

    /// Waits (polling every 20 ms) until `condition` holds, for at most `seconds`.
    @discardableResult
    func wait(seconds: Double = 10, until condition: (ModelEvents) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(self)
    }
}

/// A folder under /tmp removed when the value goes away.
final class ScratchFolder: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/crescent-location-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ServiceError(.io, "mkdtemp failed") }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `text` to `name` in the folder and returns its path.
    func write(_ name: String, _ text: String) throws -> String {
        let file = "\(path)/\(name)"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }
}

/// Writes NMEA 0183 sentences with their checksums.
enum NMEAWriter {
    /// `$BODY*hh`.
    static func sentence(_ body: String) -> String {
        let sum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
        let hex = String(sum, radix: 16, uppercase: true)
        return "$\(body)*\(hex.count == 1 ? "0" + hex : hex)"
    }

    /// `ddmm.mmmm,N` or `dddmm.mmmm,E`.
    static func coordinate(_ value: Double, latitude: Bool) -> String {
        let magnitude = abs(value)
        let degrees = Int(magnitude)
        let minutes = (magnitude - Double(degrees)) * 60
        let hemisphere = latitude ? (value >= 0 ? "N" : "S") : (value >= 0 ? "E" : "W")
        return String(format: latitude ? "%02d%07.4f,%@" : "%03d%07.4f,%@", degrees, minutes, hemisphere)
    }

    /// An RMC and a GGA sentence for one fix at `second` seconds after 12:00:00 on 2024-06-15.
    static func epoch(second: Int, latitude: Double, longitude: Double, altitude: Double = 35) -> [String] {
        let time = String(format: "12%02d%02d.00", second / 60, second % 60)
        let lat = coordinate(latitude, latitude: true), lon = coordinate(longitude, latitude: false)
        return [
            sentence("GPRMC,\(time),A,\(lat),\(lon),10.0,90.0,150624,,,A"),
            sentence("GPGGA,\(time),\(lat),\(lon),1,08,0.9,\(altitude),M,47.0,M,,"),
        ]
    }

    /// 2024-06-15T12:00:00Z, the time of second 0 above.
    static let baseTime = 1_718_452_800.0

    /// A route through towns of northern France, `perTown` one-second fixes at each, starting
    /// with `warmUp` fixes at the first town (gpsd drops the sentences it reads before a client
    /// watches).
    static let route: [(name: String, latitude: Double, longitude: Double)] = [
        ("Paris", 48.8534, 2.3488),
        ("Versailles", 48.8049, 2.1204),
        ("Rouen", 49.4431, 1.0993),
        ("Le Havre", 49.4938, 0.1077),
        ("Caen", 49.1829, -0.3707),
    ]

    static func routeLog(warmUp: Int = 0, perTown: Int = 3) -> String {
        var lines: [String] = []
        var second = 0
        for (index, town) in route.enumerated() {
            for _ in 0..<(perTown + (index == 0 ? warmUp : 0)) {
                lines += epoch(second: second, latitude: town.latitude, longitude: town.longitude)
                second += 1
            }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

/// Reads the value of a declared method: runs its body as the host would.
func invokeMethod(_ object: any ModelObject, _ method: String, _ arguments: [Value]) async throws(ServiceError) -> Value {
    guard let spec = object.interface.method(method) else { throw ServiceError(.notFound, "no method \(method)") }
    switch spec.body {
    case .immediate(let body): return try body(object, Arguments(arguments))
    case .async(let body): return try await body(object, Arguments(arguments))
    case .replying(let body):
        let result = await withCheckedContinuation { continuation in
            body(object, Arguments(arguments), Reply { continuation.resume(returning: $0) })
        }
        return try result.get()
    }
}

/// The error a call throws, or nil.
func serviceError(_ work: () async throws(ServiceError) -> Value) async -> ServiceError? {
    do {
        _ = try await work()
        return nil
    } catch {
        return error
    }
}

/// Runs CPU-heavy test work on a thread of its own, at the lowest scheduling priority (nice 19),
/// and waits for it without blocking a thread of Swift's shared pool: the timing-sensitive tests
/// that run beside it keep the CPU they need.
func onOwnThread<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            // On Linux this concerns the calling thread only.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
            continuation.resume(returning: work())
        }
        thread.start()
    }
}

/// How long the waits below wait in real time: only a guard against a hang. Services read files
/// on the shared pool, which the unit phase's parallel tests can hold for many seconds on a
/// two-core machine (10 s was once not enough for a replay's first fix under `make test`).
private let realTimeGuard: Duration = .seconds(30)

extension ManualClock {
    /// Waits (in real time, at most `realTimeGuard`) until some job waits on the clock: a task has reached
    /// its wait. Virtual time does not move.
    func waitForJob() async -> Bool {
        let deadline = ContinuousClock.now + realTimeGuard
        while pendingCount == 0 {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    /// Waits (in real time, at most `realTimeGuard`) until exactly one job waits on the clock, due at `due`
    /// (work in flight, such as a request and its timeout, has settled); false when it never did.
    func waitForOnlyJob(due: Duration) async -> Bool {
        let deadline = ContinuousClock.now + realTimeGuard
        while pendingCount != 1 || nextDue != due {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    /// Advances to each job as it is scheduled until `done` holds (waiting in real time, at most
    /// `realTimeGuard`, only for tasks to reach their next wait); false when it never did.
    func advanceJobs(until done: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + realTimeGuard
        while !done() {
            if let due = nextDue {
                advance(by: due - uptime)
            } else {
                guard ContinuousClock.now < deadline else { return false }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        return true
    }
}
