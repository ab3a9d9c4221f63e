import Model
public import NIOCore
import Synchronization

/// Starts the folder plugins of one host, on its loop, when their services are first touched.
///
/// The host's registry is set up before the host exists, so the services' entries hold this
/// launcher and the host attaches itself once it is made.
public final class PluginLauncher: Sendable {
    /// The host, held weakly (it holds the entries that hold this launcher), read on its loop.
    private let attached = Mutex<NIOLoopBound<WeakLink<Host>>?>(nil)
    /// The plugins that start in the background when a task touches them, by service name.
    private let backgroundStarts = Mutex<[String: PluginStart]>([:])

    public init() {}

    /// Gives the launcher its host.
    func attach(_ host: Host) {
        attached.withLock { $0 = NIOLoopBound(host.weakLink, eventLoop: host.loop) }
    }

    /// Lets tasks start `start`'s plugin in the background (see ``pendingStart(of:)``).
    func register(_ start: PluginStart) {
        backgroundStarts.withLock { starts in
            for service in start.manifest.services { starts[service] = start }
        }
    }

    /// Lets go of the registered starts as the host finishes: nothing starts a plugin after the
    /// run, and each start holds this launcher (the cycle kept both, and the plugins' settings
    /// and declarations, for the rest of the process).
    func finish() {
        backgroundStarts.withLock { $0.removeAll() }
    }

    /// The background start of the plugin providing `service`, while it has not started and
    /// must start in the background (``PluginStart/startsInBackground``).
    func pendingStart(of service: String) -> PluginStart? {
        guard let start = backgroundStarts.withLock({ $0[service] }), start.isPending, start.startsInBackground else { return nil }
        return start
    }

    /// Starts `manifest`'s plugin in the host and answers its services by name. Called on the
    /// host's loop (a script touched a service); a failure is reported once in the log and every
    /// use of the plugin's services answers it. A process plugin whose declarations `recorded`
    /// holds starts with them, without waiting for its `initialize` answer.
    func start(_ manifest: PluginManifest, settings: Value, limits: PluginsSection,
               recorded: RecordedDeclarations) -> Result<[String: any Service], ServiceError> {
        guard let bound = attached.withLock({ $0 }), bound.eventLoop.inEventLoop, let host = bound.value.object, host.isRunning else {
            return .failure(ServiceError(.unavailable, "plugin '\(manifest.name)' starts only on its host's loop"))
        }
        if let refusal = Self.refusal(of: manifest, limits: limits, in: host) { return .failure(refusal) }
        let started: Result<[String: any Service], PluginProblem>
        switch manifest.kind {
        case .lua(let main):
            started = LuaPluginRuntime.start(manifest, main: main, settings: settings, limits: limits, parent: host)
        case .process(let command):
            started = ProcessPlugin.start(manifest, command: command, settings: settings, limits: limits,
                                          known: recorded.declarations, parent: host)
        }
        return Self.reported(started, of: manifest, in: host)
    }

    /// Starts `manifest`'s process plugin without holding the loop and answers `done` on the
    /// loop once its `initialize` answer has declared its services, or it could not start.
    func startInBackground(_ manifest: PluginManifest, settings: Value, limits: PluginsSection, recorded: RecordedDeclarations,
                           done: @escaping (Result<[String: any Service], ServiceError>) -> Void) {
        guard case .process(let command) = manifest.kind, let bound = attached.withLock({ $0 }), bound.eventLoop.inEventLoop,
              let host = bound.value.object, host.isRunning else {
            done(start(manifest, settings: settings, limits: limits, recorded: recorded))
            return
        }
        if let refusal = Self.refusal(of: manifest, limits: limits, in: host) {
            done(.failure(refusal))
            return
        }
        ProcessPlugin.startInBackground(manifest, command: command, settings: settings, limits: limits, parent: host) { started in
            done(Self.reported(started, of: manifest, in: host))
        }
    }

    /// Starts `manifest`'s plugin for a touch that cannot wait (outside a task): as
    /// ``start(_:settings:limits:recorded:)``, except that a process plugin never seen before
    /// holds the loop at most ``ProcessPlugin/touchGrace``; past it this answers nil and the start
    /// goes on in the background, `done` answering it on the loop.
    func startHoldingBriefly(_ manifest: PluginManifest, settings: Value, limits: PluginsSection, recorded: RecordedDeclarations,
                             done: @escaping (Result<[String: any Service], ServiceError>) -> Void) -> Result<[String: any Service], ServiceError>? {
        guard case .process(let command) = manifest.kind, recorded.declarations == nil, let bound = attached.withLock({ $0 }),
              bound.eventLoop.inEventLoop, let host = bound.value.object, host.isRunning else {
            return start(manifest, settings: settings, limits: limits, recorded: recorded)
        }
        if let refusal = Self.refusal(of: manifest, limits: limits, in: host) { return .failure(refusal) }
        let started = ProcessPlugin.startHoldingBriefly(manifest, command: command, settings: settings, limits: limits, parent: host) { started in
            done(Self.reported(started, of: manifest, in: host))
        }
        return started.map { Self.reported($0, of: manifest, in: host) }
    }

    /// Why `manifest`'s plugin may not start, warned in the log: it asks for permissions its
    /// user has not granted, or it is a process plugin the kernel cannot confine and
    /// `[plugins] allow_unsandboxed` does not name.
    ///
    /// A grant made at the question is checked again as at any start (`asking` false): a link
    /// re-pointed after the answer, or a kernel without Landlock, still refuses.
    static func refusal(of manifest: PluginManifest, limits: PluginsSection, in host: Host, asking: Bool = true) -> ServiceError? {
        let refusal: ServiceError
        let grants = PluginGrants(dataDirectory: host.options.dataDirectory)
        switch grants.status(of: manifest) {
        case .notGranted(_, _) where grants.problem != nil:
            // `plugins allow` would refuse the broken file too: name it, not only the command.
            refusal = ServiceError(.permission, "plugin '\(manifest.name)' has no grant that holds: the grants file cannot be read: \(grants.problem ?? ""); fix or remove it, then run `crescent plugins allow \(manifest.name)`")
        case .notGranted(_, _) where PluginGrantKey.problem() != nil:
            // As a broken grants file: `plugins allow` refuses until the key is fixed.
            refusal = ServiceError(.permission, "plugin '\(manifest.name)' has no grant that holds: \(PluginGrantKey.problem() ?? ""); then run `crescent plugins allow \(manifest.name)`")
        case .notGranted(let missing, let update):
            if asking && host.askToGrant(manifest) { return Self.refusal(of: manifest, limits: limits, in: host, asking: false) }
            let asks = PluginCatalog.terminalSafe(missing.joined(separator: ", "))
            refusal = ServiceError(.permission, update
                ? "plugin '\(manifest.name)' \(manifest.version) asks for more than was granted (\(asks)): run `crescent plugins allow \(manifest.name)` to review and grant it"
                : "plugin '\(manifest.name)' asks for permissions not granted (\(asks)): run `crescent plugins allow \(manifest.name)` to review and grant them")
        case .notNeeded, .granted:
            guard case .process = manifest.kind, PluginSandbox.landlockABI() < 1, !limits.allowUnsandboxed.contains(manifest.name) else { return nil }
            refusal = ServiceError(.permission, "plugin '\(manifest.name)' is a process plugin and this kernel has no Landlock (Linux 5.13 or later, with landlock among the LSMs), so its permissions cannot be enforced: it runs only if [plugins] allow_unsandboxed = [\"\(manifest.name)\"] in crescent.toml says so")
        }
        host.log(.warn, plugin: manifest.name, refusal.message)
        return refusal
    }

    /// How the error of a call to a service of plugin `name` that failed to start begins
    /// (`plugin check` tells it from the other errors by it).
    static func startFailure(of name: String) -> String { "plugin '\(name)' could not start: " }

    /// A start's outcome for the services: a failure is reported once in the log.
    private static func reported(_ started: Result<[String: any Service], PluginProblem>, of manifest: PluginManifest,
                                 in host: Host) -> Result<[String: any Service], ServiceError> {
        switch started {
        case .success(let services):
            return .success(services)
        case .failure(let problem):
            // The message names the plugin's folder, whose name its author chose: no escape
            // sequence of it reaches the terminal.
            let message = PluginCatalog.terminalSafe(problem.message, keepingLines: true)
            host.writeError("\(host.console.styled("crescent:", .error)) error: plugin '\(manifest.name)' skipped: \(message)")
            let firstLine = message.split(separator: "\n").first.map(String.init) ?? message
            return .failure(ServiceError(.unavailable, startFailure(of: manifest.name) + "\(firstLine); "
                                         + "see `crescent plugin check \(PluginCatalog.terminalSafe(manifest.folder))`"))
        }
    }
}

/// Runs `body` with a plugin's loop-confined value on its loop: at once when already there (a
/// call starts on the loop), else as a job on the loop (a reply cancelled from another thread).
func onLoop<Value>(_ bound: NIOLoopBound<Value>, _ body: @escaping (Value) -> Void) {
    if bound.eventLoop.inEventLoop {
        body(bound.value)
    } else {
        let boundBody = NIOLoopBound(body, eventLoop: bound.eventLoop)
        bound.eventLoop.execute { boundBody.value(bound.value) }
    }
}
