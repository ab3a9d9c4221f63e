import Model

/// Where a ``Replay`` takes its fixes from, oldest first, each with the time it was recorded
/// (nil when the recording has none). A source can read as it goes (a GPX file), so a long
/// recording replays in bounded memory.
protocol ReplaySource {
    /// The next recorded fix; nil after the last.
    ///
    /// - Throws: what makes the rest of the recording unreadable (reported as `didFail`
    ///   after the fixes before it).
    mutating func next() throws(ServiceError) -> (fix: LocationFix, recordedTime: Double?)?
}

/// Replays recorded fixes at their recorded pace divided by `speedup`.
///
/// A fix without a recorded time (a GPX point without `<time>`) comes one second after the one
/// before it and is stamped with the wall-clock time it is reported; fixes whose recorded times
/// go backwards come at once. Fixes that are already due (a slow consumer, a huge speed-up) are
/// reported together, at most ``maxBatch`` at a time. The source is read one fix ahead of the
/// replay, never further.
struct Replay {
    /// Recorded seconds per replayed second.
    let speedup: Double
    private let source: any ReplaySource

    /// The most fixes one report carries, so a replay of fixes that are all due at once still
    /// holds only a batch of them.
    static let maxBatch = 512

    init(source: some ReplaySource, speedup: Double) {
        self.source = source
        self.speedup = speedup
    }

    /// Fixes held in memory, with their recorded times.
    init(fixes: [LocationFix], speedup: Double, recordedTimes: [Double?]) {
        self.init(source: RecordedFixes(fixes: fixes, times: recordedTimes), speedup: speedup)
    }

    /// The recorded times with the missing ones filled in: one second after the one before,
    /// or 0 for a first fix without a time.
    static func resolvedTimes(_ recorded: [Double?]) -> [Double] {
        var previous: Double?
        return recorded.map { time in
            let resolved = time ?? previous.map { $0 + 1 } ?? 0
            previous = resolved
            return resolved
        }
    }

    /// Reports every fix at its time on `clock`; returns early when cancelled, else reports
    /// `ended` (after a failure of the source, `failed` first). Each batch is a job of the
    /// clock, so a manual clock replays without real waits.
    func run(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async {
        let cursor = ReplayCursor(source)
        do {
            try cursor.advance()
        } catch {
            report(.failed(error))
            report(.ended)
            return
        }
        guard let origin = cursor.pending?.time else {
            report(.ended)
            return
        }
        let start = clock.uptime
        let speedup = self.speedup
        // When a fix recorded at `time` is due, from the start of the replay (saturating: a
        // huge recorded gap or a tiny speed-up waits at most a century instead of overflowing).
        let offset = { @Sendable (time: Double) -> Duration in .seconds(seconds: max(0, time - origin) / speedup) }
        await clock.repeating {
            let elapsed = clock.uptime - start
            var batch: [LocationFix] = []
            var failure: ServiceError?
            while let pending = cursor.pending, offset(pending.time) <= elapsed, batch.count < Self.maxBatch {
                var fix = pending.fix
                if pending.untimed { fix.time = clock.wallTime }
                batch.append(fix)
                do throws(ServiceError) {
                    try cursor.advance()
                } catch {
                    failure = error
                    cursor.pending = nil
                }
            }
            if !batch.isEmpty { report(.fixes(batch)) }
            if let failure { report(.failed(failure)) }
            guard let pending = cursor.pending else {
                report(.ended)
                return nil
            }
            return batch.count == Self.maxBatch ? .zero : offset(pending.time) - elapsed
        }
    }
}

/// Fixes already in memory, as a ``ReplaySource``.
private struct RecordedFixes: ReplaySource {
    let fixes: [LocationFix]
    let times: [Double?]
    var index = 0

    mutating func next() throws(ServiceError) -> (fix: LocationFix, recordedTime: Double?)? {
        guard index < fixes.count else { return nil }
        defer { index += 1 }
        return (fixes[index], index < times.count ? times[index] : fixes[index].time)
    }
}

/// How far a replay has got: its source and the next fix, read ahead. Only the replay's steps
/// touch it, and they never overlap (``Model/ServiceClock/repeating(_:)`` schedules a step
/// after the previous one returned, and the first step after ``advance()`` in `run`), which is
/// what makes the unchecked sendability safe.
private final class ReplayCursor: @unchecked Sendable {
    private var source: any ReplaySource
    /// The next fix to report, its recorded time (filled in when missing) and whether it had one.
    var pending: (fix: LocationFix, time: Double, untimed: Bool)?
    private var previousTime: Double?

    init(_ source: any ReplaySource) { self.source = source }

    /// Reads the next fix into ``pending`` (nil after the last).
    func advance() throws(ServiceError) {
        guard let next = try source.next() else {
            pending = nil
            return
        }
        let time = next.recordedTime ?? previousTime.map { $0 + 1 } ?? 0
        previousTime = time
        pending = (next.fix, time, next.recordedTime == nil)
    }
}
