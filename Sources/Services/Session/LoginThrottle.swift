import Model
import Synchronization

/// Slows down password guessing per name: attempts for one name run one at a time, and after
/// n consecutive failures the next attempt waits `base * 2^(n-1)` seconds (capped) before it is
/// checked. Unknown names are counted like known ones, so the delay tells nothing either.
///
/// The count lives in this process only and is forgotten after ``forgetAfter`` seconds without
/// a failure (and on success).
final class LoginThrottle: Sendable {
    /// Seconds without a failure after which a name's count starts again from zero.
    static let forgetAfter = 900.0
    /// Past this many tracked names, idle ones are dropped.
    private static let pruneThreshold = 1_000

    private let base: Double
    private let cap: Double
    private let clock: any ServiceClock
    private let names = Mutex<[String: Entry]>([:])

    private struct Entry {
        var failures = 0
        var lastFailure = 0.0
        var busy = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    init(base: Double, cap: Double, clock: any ServiceClock) {
        self.base = base
        self.cap = cap
        self.clock = clock
    }

    /// The delay before an attempt after `failures` consecutive failures.
    func delay(afterFailures failures: Int) -> Double {
        guard failures > 0, base > 0 else { return 0 }
        let doublings = min(failures - 1, 62)
        return min(base * Double(1 << doublings), cap)
    }

    /// Runs `check` as one attempt for `name`: after the attempts before it, after the delay its
    /// failures call for. `check` returns whether the attempt succeeded, and its result.
    func attempt<Output>(_ name: String,
                         _ check: () async throws(ServiceError) -> (succeeded: Bool, output: Output)) async throws(ServiceError) -> Output {
        await enter(name)
        defer { leave(name) }
        let waitSeconds = delay(afterFailures: failures(of: name))
        if waitSeconds > 0 {
            do {
                try await clock.sleep(for: .seconds(seconds: waitSeconds))
            } catch {
                throw ServiceError(.cancelled, "the request was cancelled")
            }
        }
        guard !Task.isCancelled else { throw ServiceError(.cancelled, "the request was cancelled") }
        let outcome = try await check()
        record(name, succeeded: outcome.succeeded)
        return outcome.output
    }

    /// Consecutive failures for `name` (0 once forgotten).
    func failures(of name: String) -> Int {
        let now = clock.uptime.inSeconds
        return names.withLock { names in
            guard let entry = names[name], now - entry.lastFailure < Self.forgetAfter else { return 0 }
            return entry.failures
        }
    }

    // MARK: One attempt at a time

    private func enter(_ name: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let proceed = names.withLock { names in
                var entry = names[name] ?? Entry()
                defer { names[name] = entry }
                guard entry.busy else {
                    entry.busy = true
                    return true
                }
                entry.waiting.append(continuation)
                return false
            }
            if proceed { continuation.resume() }
        }
    }

    private func leave(_ name: String) {
        let next: CheckedContinuation<Void, Never>? = names.withLock { names in
            guard var entry = names[name] else { return nil }
            if !entry.waiting.isEmpty {
                let next = entry.waiting.removeFirst()
                names[name] = entry
                return next
            }
            entry.busy = false
            names[name] = entry.failures == 0 ? nil : entry
            return nil
        }
        next?.resume()
    }

    private func record(_ name: String, succeeded: Bool) {
        let now = clock.uptime.inSeconds
        names.withLock { names in
            guard var entry = names[name] else { return }
            if succeeded || now - entry.lastFailure >= Self.forgetAfter { entry.failures = 0 }
            if !succeeded {
                entry.failures += 1
                entry.lastFailure = now
            }
            names[name] = entry
            if names.count > Self.pruneThreshold {
                names = names.filter { $0.value.busy || now - $0.value.lastFailure < Self.forgetAfter }
            }
        }
    }
}
