import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The time the process has spent waiting for a person to answer a ``TerminalQuestion``, which
/// no plugin's time limit counts: the loop waits on the person as on a password, so a method
/// that touched a plugin whose permissions were asked for, and every other call in flight, would
/// otherwise run out of its `call_timeout` while the person read the question (third permissions
/// attack, L: `y` after 6 s recorded the grant, yet the call it was for answered `timeout`).
///
/// Time limits read ``excluded(atMonotonic:)`` and count from "question-free" time, the real
/// time less this: it stands still while a question waits. In real (`CLOCK_MONOTONIC`)
/// nanoseconds, as the questions wait in real time; a virtual clock never meets a question
/// (nobody is asked in a test host).
final class QuestionTime: Sendable {
    /// The one terminal's questions (``TerminalQuestion/shared``).
    static let shared = QuestionTime()

    private struct State {
        /// The waits of the questions answered so far, added up.
        var answered: UInt64 = 0
        /// When the question waiting now was put (monotonic nanoseconds); nil when none waits.
        var askedAt: UInt64?
    }

    private let state = Mutex(State())
    /// Whether a question was ever put: until then nothing is excluded, with no lock taken (time
    /// limits read this on every plugin call).
    private let everAsked = Atomic<Bool>(false)

    /// A question is put now.
    func started() {
        let now = Self.monotonic()
        state.withLock { $0.askedAt = now }
        everAsked.store(true, ordering: .releasing)
    }

    /// The question put last has its answer (or none came): its wait is counted.
    func ended() {
        let now = Self.monotonic()
        state.withLock { state in
            guard let askedAt = state.askedAt else { return }
            state.answered += now >= askedAt ? now - askedAt : 0
            state.askedAt = nil
        }
    }

    /// The nanoseconds of question waits up to `now` (monotonic nanoseconds), the one waiting
    /// now included.
    func excluded(atMonotonic now: UInt64) -> UInt64 {
        guard everAsked.load(ordering: .acquiring) else { return 0 }
        return state.withLock { state in
            guard let askedAt = state.askedAt, now > askedAt else { return state.answered }
            return state.answered + (now - askedAt)
        }
    }

    /// The nanoseconds of question waits until now (no clock read before a first question).
    var excludedNow: UInt64 {
        everAsked.load(ordering: .acquiring) ? excluded(atMonotonic: Self.monotonic()) : 0
    }

    /// The monotonic clock in nanoseconds (what ``SystemClock`` and ``RunawayWatchdog`` read).
    static func monotonic() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
