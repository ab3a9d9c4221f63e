import Model
import Synchronization

/// Starts one plugin once, for whichever of its services is touched first; remembers the
/// services it made, or why it could not start.
///
/// A plugin that must answer `initialize` before its services exist (a process plugin never
/// seen before) can start in the background: the tasks that touched it wait, the loop runs on,
/// and they carry on once the answer has made the services or the start has failed.
final class PluginStart: Sendable {
    let manifest: PluginManifest
    let settings: Value
    let limits: PluginsSection
    let launcher: PluginLauncher?
    /// What an earlier run recorded of its declarations.
    let recorded: RecordedDeclarations

    /// True when touching a service from a task starts the plugin in the background: a process
    /// plugin whose declarations no record holds, which only its `initialize` answer gives.
    var startsInBackground: Bool {
        guard case .process = manifest.kind else { return false }
        return recorded.declarations == nil
    }

    private enum State {
        case idle
        /// Starting, in the background or for a touch on the loop: what to run once it has
        /// started or failed.
        case starting([@Sendable () -> Void])
        case done(Result<[String: any Service], ServiceError>)
    }

    private let state = Mutex<State>(.idle)

    init(manifest: PluginManifest, settings: Value, limits: PluginsSection, launcher: PluginLauncher?, recorded: RecordedDeclarations) {
        self.manifest = manifest
        self.settings = settings
        self.limits = limits
        self.launcher = launcher
        self.recorded = recorded
    }

    /// True until the plugin has started or failed to.
    var isPending: Bool {
        state.withLock { state in
            if case .done = state { return false }
            return true
        }
    }

    /// The service `name`, starting the plugin now if need be (holding the caller until it has
    /// started). While a background start is under way it answers `unavailable`.
    func service(named name: String) throws(ServiceError) -> any Service {
        let known = state.withLock { (state: inout State) -> Result<[String: any Service], ServiceError>? in
            switch state {
            case .done(let result):
                return result
            case .starting:
                return .failure(ServiceError(.unavailable, "plugin '\(manifest.name)' is still starting: touch its services inside a task to wait for it"))
            case .idle:
                state = .starting([])
                return nil
            }
        }
        let services: [String: any Service]
        if let known {
            services = try known.get()
        } else {
            // Started outside the lock: the start runs the plugin's code, and whatever that code
            // touches must find this start under way, not the lock held.
            let result: Result<[String: any Service], ServiceError>
            if let launcher {
                result = launcher.start(manifest, settings: settings, limits: limits, recorded: recorded)
            } else {
                result = .failure(ServiceError(.unavailable, "plugin '\(manifest.name)' starts only inside a running host"))
            }
            finish(result)
            services = try result.get()
        }
        guard let service = services[name] else {
            throw ServiceError(.internal, "plugin '\(manifest.name)' did not declare service '\(name)'")
        }
        return service
    }

    /// Starts the plugin in the background, or joins the start under way, and runs `whenDone`
    /// on the loop once it has started or failed (``service(named:)`` then answers at once).
    /// Called on the host's loop.
    func startInBackground(whenDone: @escaping @Sendable () -> Void) {
        let begins = state.withLock { (state: inout State) -> Bool in
            switch state {
            case .done:
                return false
            case .starting(var waiting):
                waiting.append(whenDone)
                state = .starting(waiting)
                return false
            case .idle:
                state = .starting([whenDone])
                return true
            }
        }
        guard begins else {
            if !isPending { whenDone() }
            return
        }
        guard let launcher else {
            finish(.failure(ServiceError(.unavailable, "plugin '\(manifest.name)' starts only inside a running host")))
            return
        }
        launcher.startInBackground(manifest, settings: settings, limits: limits, recorded: recorded) { [self] result in finish(result) }
    }

    /// Starts the plugin for a touch outside a task, which cannot wait: true once it has
    /// started or failed (``service(named:)`` then answers at once), false while it starts on
    /// in the background. A program never seen before holds the loop at most
    /// ``ProcessPlugin/touchGrace`` (holding it for the program's whole time limit would stop
    /// timers, tasks and remote clients meanwhile). Called on the host's loop.
    func startForTouch() -> Bool {
        let begins = state.withLock { (state: inout State) -> Bool? in
            switch state {
            case .done: return nil
            case .starting: return false
            case .idle:
                state = .starting([])
                return true
            }
        }
        guard let begins else { return true }
        guard begins else { return false }
        guard let launcher else {
            finish(.failure(ServiceError(.unavailable, "plugin '\(manifest.name)' starts only inside a running host")))
            return true
        }
        guard let started = launcher.startHoldingBriefly(manifest, settings: settings, limits: limits, recorded: recorded,
                                                         done: { [self] result in finish(result) }) else { return false }
        finish(started)
        return true
    }

    private func finish(_ result: Result<[String: any Service], ServiceError>) {
        let waiting = state.withLock { (state: inout State) -> [@Sendable () -> Void] in
            guard case .starting(let waiting) = state else { return [] }
            state = .done(result)
            return waiting
        }
        for whenDone in waiting { whenDone() }
    }
}

extension PluginStart: PendingServiceStart {
    func stillStartingNote(touching service: String) -> String {
        "plugin '\(manifest.name)' is starting (its program has not answered 'initialize' within "
            + "\(formatSeconds(ProcessPlugin.touchGrace)) s): touch services.\(service) inside a task to wait for it"
    }
}
