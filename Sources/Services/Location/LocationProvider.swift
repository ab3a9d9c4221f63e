import Glibc
import Model

/// What a provider tells the location service.
enum ProviderEvent: Sendable {
    /// New fixes, oldest first.
    case fixes([LocationFix])
    /// The source cannot be read now (gpsd unreachable, a device gone); the provider keeps trying.
    case failed(ServiceError)
    /// A finite source (a file replay) has no more fixes.
    case ended
}

/// A source of fixes: gpsd, an NMEA file or device, a GPX track, a fixed point.
///
/// ``run(_:)`` runs while the service is started (or a `current()` call waits) and returns when
/// its task is cancelled; a finite source reports ``ProviderEvent/ended`` and returns earlier.
protocol LocationProvider: Sendable {
    /// `gpsd`, `nmea`, `gpx` or `fixed`: the `provider` of its fixes.
    var name: String { get }
    /// Where it reads from, for messages and `help` (`127.0.0.1:2947`, a file).
    var source: String { get }
    /// Reports fixes and failures through `report` until cancelled, reading time and waiting
    /// through `clock`.
    func run(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async
    /// For a provider that only schedules jobs on `clock`: starts it without a task and returns
    /// what stops it, reporting nothing before it returns (the service holds its lock). Nil (the
    /// default): the service runs ``run(clock:_:)`` in a task.
    func start(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) -> Cancellation?
}

extension LocationProvider {
    func start(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) -> Cancellation? { nil }
}

/// Replays recorded fixes at their recorded pace divided by `speedup`.
///
/// A fix without a recorded time (a GPX point without `<time>`) comes one second after the one
/// before it and is stamped with the wall-clock time it is reported; fixes whose recorded times
/// go backwards come at once. Fixes that are already due
/// (a slow consumer, a huge speed-up) are reported together.
struct Replay: Sendable {
    let fixes: [LocationFix]
    /// Recorded seconds per replayed second.
    let speedup: Double
    /// The recorded time of each fix, with missing times filled in.
    let times: [Double]
    /// Which fixes had no recorded time.
    let untimed: [Bool]

    init(fixes: [LocationFix], speedup: Double, recordedTimes: [Double?]) {
        self.fixes = fixes
        self.speedup = speedup
        var times: [Double] = []
        var previous: Double?
        for time in recordedTimes {
            let resolved = time ?? previous.map { $0 + 1 } ?? 0
            times.append(resolved)
            previous = resolved
        }
        self.times = times
        untimed = recordedTimes.map { $0 == nil }
    }

    /// Reports every fix at its time on `clock`; returns early when cancelled, else reports
    /// `ended`. Each batch is a job of the clock, so a manual clock replays without real waits.
    func run(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async {
        guard !fixes.isEmpty else {
            report(.ended)
            return
        }
        let start = clock.uptime
        let cursor = ReplayCursor()
        await clock.repeating { [self] in
            let elapsed = clock.uptime - start
            var batch: [LocationFix] = []
            while cursor.next < fixes.count && offset(cursor.next) <= elapsed {
                var fix = fixes[cursor.next]
                if untimed[cursor.next] { fix.time = clock.wallTime }
                batch.append(fix)
                cursor.next += 1
            }
            if !batch.isEmpty { report(.fixes(batch)) }
            guard cursor.next < fixes.count else {
                report(.ended)
                return nil
            }
            return offset(cursor.next) - elapsed
        }
    }

    /// When fix `index` is due, from the start of the replay (saturating: a huge recorded gap or
    /// a tiny speed-up waits at most a century instead of overflowing).
    private func offset(_ index: Int) -> Duration {
        .seconds(seconds: max(0, times[index] - times[0]) / speedup)
    }
}

/// How far a replay has got. Only the replay's steps touch it, and they never overlap
/// (``Model/ServiceClock/repeating(_:)`` schedules a step after the previous one returned), which is
/// what makes the unchecked sendability safe.
private final class ReplayCursor: @unchecked Sendable {
    var next = 0
}
