import LuaBridge
import Model
import NIOCore
import Services
import Synchronization

/// What a test printed, in order; and what went to stderr alone. Each is kept to
/// ``SpecOutput/limit`` bytes, its start and its end: the VM's memory limit does not cover this
/// copy, and a test that prints a gigabyte must not cost the run a gigabyte.
final class SpecOutput: Sendable {
    /// The most kept of each: half from the start, half from the end.
    static let limit = 1 << 20

    /// Text kept as its first bytes and its last, with how many between were left out.
    struct Kept: Sendable {
        var head = ""
        var tail = ""
        var dropped = 0
        /// What the text is, as the note of what was left out names it.
        var what = "output"

        mutating func add(_ text: String) {
            let half = SpecOutput.limit / 2
            var rest = Substring(text)
            let room = half - head.utf8.count
            if room > 0 {
                let end = rest.utf8.index(rest.utf8.startIndex, offsetBy: min(room, rest.utf8.count))
                head += rest[..<end]
                rest = rest[end...]
            }
            guard !rest.isEmpty else { return }
            tail += rest
            // Cut the tail back to half only once it holds a whole limit: cheap, amortized.
            if tail.utf8.count > SpecOutput.limit {
                let start = tail.utf8.index(tail.utf8.endIndex, offsetBy: -half)
                let kept = String(tail[start...])
                dropped += tail.utf8.count - kept.utf8.count
                tail = kept
            }
        }

        var text: String {
            dropped == 0 ? head + tail : head + "\n[... \(dropped) bytes of \(what) left out ...]\n" + tail
        }
    }

    private let state = Mutex((all: Kept(), errors: Kept(), printed: Kept()))

    func append(_ text: String, error: Bool) {
        state.withLock { state in
            state.all.add(text)
            if error { state.errors.add(text) } else { state.printed.add(text) }
        }
    }

    var text: String { state.withLock { $0.all.text } }
    var errors: String { state.withLock { $0.errors.text } }
    /// What went to stdout alone: the output a failure shows when it shows the errors already.
    var printed: String { state.withLock { $0.printed.text } }

    /// Forgets what was captured: the next test of a kept host starts with none.
    func clear() { state.withLock { $0 = (all: Kept(), errors: Kept(), printed: Kept()) } }
}

/// What the services of a spec file's host reach the host through: made before the host (the plugin
/// needs it), filled in once the host exists.
final class SpecLink: Sendable {
    let host = Mutex<HostLink?>(nil)
    let spec = Mutex<NIOLoopBound<Unowned<SpecHost>>?>(nil)
    /// Failures noticed by the services (the real device reached), for the running test.
    let notices = Mutex<[String]>([])

    /// Runs `work` with the spec host when called on its loop (where services call their
    /// methods); nil elsewhere, or once the host is gone.
    func onLoop<Result>(_ work: (SpecHost) -> Result) -> Result? {
        guard let bound = spec.withLock({ $0 }), bound.eventLoop.inEventLoop, let spec = bound.value.object else { return nil }
        return work(spec)
    }

    /// Runs `work` with the spec host on its loop: at once when called there, else as a turn
    /// (`nil` once the host is gone).
    func withSpec(_ work: @escaping @Sendable (SpecHost?) -> Void) {
        guard let bound = spec.withLock({ $0 }), let host = self.host.withLock({ $0 }) else { return work(nil) }
        host.turn { _ in work(bound.value.object) }
    }

    /// Runs `work` with the spec host on its loop as a turn of its own, after everything
    /// already queued (also when called on the loop): what a real program does ends no sooner,
    /// so the code that started it finishes its turn first (`nil` once the host is gone).
    func withSpecLater(_ work: @escaping @Sendable (SpecHost?) -> Void) {
        guard let bound = spec.withLock({ $0 }), let host = self.host.withLock({ $0 }),
              host.later({ _ in work(bound.value.object) }) else { return work(nil) }
    }

    /// `file:line: ` of the script's call that is starting a service's work, when called on the
    /// loop during it (``ModelBinding/callingPlace()``); nil otherwise.
    func callingPlace() -> String? {
        onLoop { $0.host.binding.callingPlace() } ?? nil
    }

    /// Notes a failure of the running test found by a service.
    func notice(_ message: String) {
        notices.withLock { notices in
            if !notices.contains(message) { notices.append(message) }
        }
    }
}

/// A reference that does not keep its object alive (a closure stored in what the object owns).
final class Unowned<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}
