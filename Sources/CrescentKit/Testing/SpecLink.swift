import LuaBridge
import Model
import NIOCore
import Services
import Synchronization

/// What a test printed, in order; and what went to stderr alone.
final class SpecOutput: Sendable {
    private let state = Mutex((all: "", errors: ""))

    func append(_ text: String, error: Bool) {
        state.withLock { state in
            state.all += text
            if error { state.errors += text }
        }
    }

    var text: String { state.withLock { $0.all } }
    var errors: String { state.withLock { $0.errors } }
}

/// What the services of a test's host reach the host through: made before the host (the plugin
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
