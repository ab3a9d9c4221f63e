public import Model
import Synchronization

/// Fixes and failures given by the caller instead of a device: `crescent test`'s
/// `fake.location`. The service it drives (``LocationService/init(script:clock:)``) replays the
/// fixes on its clock, the first at once (on the clock's next turn) and each next one its
/// offset later, and reports a failure whenever ``fail(_:)`` is called.
///
/// ```swift
/// let script = LocationScript(fixes: [paris, lyon], interval: 60)
/// let location = LocationService(script: script, clock: clock)
/// script.fail(ServiceError(.unavailable, "the receiver lost its fix"))   // didFail
/// ```
public final class LocationScript: Sendable {
    /// The fixes, oldest first.
    let fixes: [LocationFix]
    /// Seconds from the start of a run to each fix.
    let offsets: [Double]
    /// What the replay says it reads, for messages (`fake`, a track's path).
    let source: String
    /// A failure to report when a run starts instead of the fixes (a device that is not there).
    private let failure: ServiceError?
    /// Called when a run starts.
    private let onStart: (@Sendable () -> Void)?
    private let runs = Mutex(Runs())

    private struct Runs {
        var nextID = 0
        var active: [Int: @Sendable (ProviderEvent) -> Void] = [:]
    }

    /// Fixes `interval` seconds apart, or at the given `offsets` (seconds from the start).
    public init(fixes: [LocationFix], interval: Double = 1, offsets: [Double]? = nil, source: String = "fake") {
        self.fixes = fixes
        self.offsets = offsets ?? fixes.indices.map { Double($0) * max(0, interval) }
        self.source = source
        failure = nil
        onStart = nil
    }

    /// A GPX track's points, `interval` seconds apart, or at their recorded pace when nil.
    ///
    /// - Throws: `invalid_argument` naming the file when it cannot be read or parsed.
    public convenience init(track path: String, interval: Double?) throws(ServiceError) {
        let points: [GPXParser.Point]
        do {
            points = try GPXParser.parse(try FileBytes.read(path))
        } catch {
            throw ServiceError(.invalidArgument, "track \(path): \(error.message)")
        }
        let times = Replay.resolvedTimes(points.map(\.time))
        let first = times.first ?? 0
        let offsets = interval == nil ? times.map { max(0, $0 - first) } : nil
        self.init(fixes: GPXParser.fixes(points), interval: interval ?? 1, offsets: offsets, source: path)
    }

    /// A source that is not there: every run calls `onStart`, then reports `error` and ends.
    public init(unavailable error: ServiceError, onStart: (@Sendable () -> Void)? = nil) {
        fixes = []
        offsets = []
        source = "fake"
        failure = error
        self.onStart = onStart
    }

    /// Reports `error` (a `didFail`) to the running replay; the replay goes on.
    public func fail(_ error: ServiceError) {
        for report in runs.withLock({ Array($0.active.values) }) { report(.failed(error)) }
    }

    /// Starts a run: every report is a job of `clock`, none is made before this returns.
    func start(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) -> Cancellation {
        onStart?()
        let id = runs.withLock { runs in
            runs.nextID += 1
            runs.active[runs.nextID] = report
            return runs.nextID
        }
        let run = Cancellation()
        let step = Mutex<Cancellation?>(nil)
        let start = clock.uptime
        @Sendable func schedule(_ index: Int) {
            let due = index < offsets.count ? start + .seconds(seconds: offsets[index]) : clock.uptime
            let job = clock.schedule(after: due - clock.uptime) { [self] in
                guard !run.isCancelled else { return }
                if let failure {
                    report(.failed(failure))
                    report(.ended)
                    return
                }
                guard index < fixes.count else {
                    report(.ended)
                    return
                }
                report(.fixes([fixes[index]]))
                schedule(index + 1)
            }
            step.withLock { $0 = job }
        }
        schedule(0)
        run.onCancel { [self] in
            step.withLock { $0 }?.cancel()
            _ = runs.withLock { $0.active.removeValue(forKey: id) }
        }
        return run
    }
}

/// The provider of a ``LocationScript``.
struct ScriptedProvider: LocationProvider {
    let name = "fake"
    let script: LocationScript

    var source: String { script.source }

    func start(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) -> Cancellation? {
        script.start(clock: clock, report)
    }

    func run(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async {
        let run = script.start(clock: clock, report)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                run.onCancel { continuation.resume() }
            }
        } onCancel: {
            run.cancel()
        }
    }
}
