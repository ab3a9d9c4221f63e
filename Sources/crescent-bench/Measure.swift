import Glibc

/// Monotonic time in nanoseconds, from `CLOCK_MONOTONIC` (no allocation, no Foundation).
enum MonotonicClock {
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Runs `body` once and returns how long it took, in nanoseconds.
    static func time<E: Error>(_ body: () throws(E) -> Void) throws(E) -> Double {
        let start = nanoseconds()
        try body()
        return Double(nanoseconds() - start)
    }
}

/// Summaries of repeated samples.
enum Statistics {
    /// The median (the mean of the two middle samples for an even count); NaN when empty.
    static func median(_ samples: [Double]) -> Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The smallest sample; NaN when empty.
    static func minimum(_ samples: [Double]) -> Double { samples.min() ?? .nan }
}

/// A measured subject and its baseline, sampled alternately so both see the same machine state.
struct PairedSamples {
    var subject: [Double] = []
    var baseline: [Double] = []

    /// Runs `warmups` unrecorded rounds, then `rounds` recorded rounds, each round measuring the
    /// subject and then the baseline. Each closure returns one sample (e.g. ns per operation).
    static func collect<E: Error>(
        rounds: Int,
        warmups: Int,
        subject: () throws(E) -> Double,
        baseline: () throws(E) -> Double
    ) throws(E) -> PairedSamples {
        for _ in 0..<warmups {
            _ = try subject()
            _ = try baseline()
        }
        var samples = PairedSamples()
        for _ in 0..<rounds {
            samples.subject.append(try subject())
            samples.baseline.append(try baseline())
        }
        return samples
    }
}

/// Why a row could not be measured (a missing binary, a Lua error, a wrong result).
struct BenchFailure: Error, CustomStringConvertible {
    let row: String
    let reason: String
    var description: String { "\(row): \(reason)" }
}
