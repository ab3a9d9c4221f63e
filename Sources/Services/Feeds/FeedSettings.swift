import Model

/// How the feeds service polls: the `[feeds]` section of `crescent.toml`.
///
/// ```toml
/// [feeds]
/// interval = 900          # seconds between polls when add() gives none (15 minutes)
/// min_interval = 60       # the shortest interval add() accepts; lower it only for tests
/// max_backoff = 14400     # the longest wait after failures (4 hours)
/// timeout = 30            # seconds for one fetch, redirects included (default: [http] timeout)
/// max_bytes = 10485760    # a larger document fails with io (default: [http] max_bytes)
/// ```
///
/// After `n` failures in a row a feed waits `interval × 2^n`, at most `max_backoff` (and never
/// less than its interval), before the next try; any answer resets the count.
struct FeedSettings: Sendable, Equatable {
    var interval = 900.0
    var minInterval = 60.0
    var maxBackoff = 14_400.0
    /// Seconds for one fetch; nil for the http service's (`[http] timeout`, 30 s).
    var timeout: Double?
    /// The largest document; nil for the http service's (`[http] max_bytes`, 10 MiB).
    var maxBytes: Int?

    init() {}

    /// The settings of `section`; a wrong type or a value out of range is `invalid_argument`.
    init(_ section: Value) throws(ServiceError) {
        minInterval = try Self.seconds(section, "min_interval", in: 0.01...86_400) ?? minInterval
        interval = try Self.seconds(section, "interval", in: minInterval...(30 * 86_400)) ?? max(interval, minInterval)
        maxBackoff = try Self.seconds(section, "max_backoff", in: 0.01...(30 * 86_400)) ?? maxBackoff
        timeout = try Self.seconds(section, "timeout", in: 0.01...3_600)
        if !section["max_bytes"].isNull {
            guard let bytes = section["max_bytes"].integerValue, bytes >= 1, bytes <= 1 << 30 else {
                throw ServiceError(.invalidArgument, "[feeds] max_bytes must be an integer in [1, 1073741824]")
            }
            maxBytes = Int(bytes)
        }
    }

    private static func seconds(_ section: Value, _ key: String, in range: ClosedRange<Double>) throws(ServiceError) -> Double? {
        guard !section[key].isNull else { return nil }
        guard let seconds = section[key].doubleValue, range.contains(seconds) else {
            throw ServiceError(.invalidArgument, "[feeds] \(key) must be a number of seconds in [\(format(range.lowerBound)), \(format(range.upperBound))]")
        }
        return seconds
    }

    /// `60`, `0.5`: a bound without a needless `.0`.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(seconds)
    }

    /// The wait before the next poll of a feed polled every `interval` seconds, after `failures`
    /// failures in a row.
    func delay(interval: Double, failures: Int) -> Double {
        guard failures > 0 else { return interval }
        let grown = interval * Double(1 << min(failures, 30))
        return min(grown, max(interval, maxBackoff))
    }
}
