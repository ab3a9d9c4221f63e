import Model
import NIOCore
import NIOPosix
import Services
#if canImport(Glibc)
import Glibc
#endif

/// A process plugin running: its program, the JSON-RPC conversation with it over its stdin and
/// stdout, and its restarts. Confined to the host's loop.
///
/// - The program starts when a script first touches one of its services, and the host sends
///   `initialize`, whose answer declares the services. When the host knows them from an earlier
///   run (``PluginDeclarationCache``), or the program starts again after an exit, the answer is
///   read on the loop: the loop runs on, and calls made meanwhile wait for it (past
///   `call_timeout` they answer `unavailable`). A plugin never seen before has no services
///   until that answer: a task that touches one waits for it (bounded by `call_timeout`, at
///   least 30 s) while the loop runs on; only a touch outside any task holds the loop for it.
///   That hold is kept on purpose: the main chunk cannot wait without stopping, and what it
///   gets must be the service itself, whose methods check their arguments at the call site and
///   whose `help()` documents it; a stand-in without the declarations could do neither, and an
///   error would break scripts that work on every later run. It happens once per plugin install
///   or change: afterwards the declarations are known and nothing holds the loop.
/// - Each call is a `call` request; the answer, or an error whose `data.code` is a service error
///   code, answers it. No call waits past `call_timeout` (it answers `timeout` and the program is
///   sent `cancel`); a cancelled request sends `cancel` too.
/// - A program that exits or crashes answers each call in flight `unavailable`, once; the next
///   call starts it again: at once after a run that answered calls, else after a backoff that
///   doubles from 1 s to 60 s on the host's clock.
/// - `set`, `emit` and `log` notifications update properties, emit events and log; values for
///   undeclared properties or events, or of the wrong type, are logged and dropped; malformed
///   lines are logged and skipped; a line over 16 MiB ends the program.
/// - At exit: `shutdown`, stdin closed, killed when still running 2 s later.
final class ProcessPlugin {
    let manifest: PluginManifest
    let command: [String]
    let settings: Value
    let callTimeout: Double
    unowned let host: Host
    var services: [String: PluginService] = [:]
    /// The running program, nil while stopped.
    var running: ProcessRun?
    /// Calls sent and not yet answered, by request id.
    var inFlight: [Int64: PluginCall] = [:]
    /// Calls that wait for the program to start again.
    var waiting: [PluginCall] = []
    var nextID: Int64 = 1
    /// The wait before the next start after a failure, and when that start may happen.
    var backoff = Backoff(initial: .seconds(1), maximum: .seconds(60))
    var restartAt: Duration?
    var restartJob: Cancellation?
    /// True once the current run answered a call: its end restarts at once.
    var answeredInThisRun = false
    /// True while the current run has not answered `initialize`: calls wait in `waiting`.
    var initializing = false
    /// True once the current run's stderr said an allocation failed (``PluginMemoryShortage``).
    var saidOutOfMemory = false
    /// Ends a run whose `initialize` answer is late.
    var startJob: Cancellation?
    /// Set while a plugin never seen before starts in the background: takes the declarations
    /// of its `initialize` answer, or why it could not start.
    var firstAnswer: ((Result<[ServiceDeclaration], PluginProblem>) -> Void)?
    /// Where the declarations are kept between runs.
    let cache: PluginDeclarationCache
    /// The declarations the services were made from.
    var knownDeclarations: [ServiceDeclaration] = []
    var isFinished = false
    /// Runs that have ended (for tests: each is reaped).
    private(set) var runs = 0

    /// The time limit of the calls in flight.
    lazy var deadlines = CallDeadlines(clock: host.clock, loop: host.loop, limit: callTimeout) { [unowned self] call in
        let limit = "\(formatSeconds(self.callTimeout)) s ([plugins] call_timeout)"
        if call.requestID == nil {
            self.drop(call, answering: ServiceError(.unavailable, "plugin '\(self.manifest.name)' did not finish starting within \(limit)"))
        } else {
            self.drop(call, answering: ServiceError(.timeout, "plugin '\(self.manifest.name)': \(call.service).\(call.method) did not answer within \(limit)"))
        }
    }

    init(manifest: PluginManifest, command: [String], settings: Value, callTimeout: Double, host: Host) {
        self.manifest = manifest
        self.command = command
        self.settings = settings
        self.callTimeout = callTimeout
        self.host = host
        cache = PluginDeclarationCache(manifest: manifest, settings: settings, dataDirectory: host.options.dataDirectory)
    }

    /// Starts the program and answers its services by name: at once when their declarations are
    /// `known` from an earlier run (the handshake goes on while the loop runs), else once its
    /// `initialize` answer has declared them.
    static func start(_ manifest: PluginManifest, command: [String], settings: Value, limits: PluginsSection,
                      known: [ServiceDeclaration]?, parent: Host) -> Result<[String: any Service], PluginProblem> {
        let plugin = ProcessPlugin(manifest: manifest, command: command, settings: settings,
                                   callTimeout: limits.callTimeout, host: parent)
        guard let known else { return plugin.services { () throws(PluginProblem) in try plugin.launch() } }
        do throws(PluginProblem) {
            try plugin.launchInBackground()
        } catch {
            return .failure(PluginProblem("\(manifest.path): \(error.message)"))
        }
        parent.teardownActions.append { plugin.finish() }
        return .success(plugin.makeServices(known))
    }

    /// The services of a start whose `initialize` answer `handshake` reads holding the loop, or
    /// why it could not start.
    func services(_ handshake: () throws(PluginProblem) -> [ServiceDeclaration]) -> Result<[String: any Service], PluginProblem> {
        let declarations: [ServiceDeclaration]
        do throws(PluginProblem) {
            declarations = try handshake()
        } catch {
            return .failure(PluginProblem("\(manifest.path): \(error.message)"))
        }
        if let problem = manifest.mismatch(declared: declarations.map(\.name), by: "its answer to 'initialize'") {
            finish()
            return .failure(problem)
        }
        cache.save(declarations)
        host.teardownActions.append { self.finish() }
        return .success(makeServices(declarations))
    }

    /// Starts the program of a plugin never seen before without holding the loop: `done` answers,
    /// on the loop, the services its `initialize` answer declares, or why it could not start.
    static func startInBackground(_ manifest: PluginManifest, command: [String], settings: Value, limits: PluginsSection,
                                  parent: Host, done: @escaping (Result<[String: any Service], PluginProblem>) -> Void) {
        let plugin = ProcessPlugin(manifest: manifest, command: command, settings: settings,
                                   callTimeout: limits.callTimeout, host: parent)
        plugin.awaitFirstAnswer(done)
        do throws(PluginProblem) {
            try plugin.launchInBackground()
        } catch {
            plugin.firstAnswer = nil
            done(.failure(PluginProblem("\(manifest.path): \(error.message)")))
            return
        }
        parent.teardownActions.append { plugin.finish() }
    }

    /// Makes the services `declarations` describe, their calls going to this plugin.
    func makeServices(_ declarations: [ServiceDeclaration]) -> [String: any Service] {
        knownDeclarations = declarations
        let bound = NIOLoopBound(self, eventLoop: host.loop)
        for declaration in declarations {
            let name = declaration.name
            services[name] = PluginService(declaration) { method, arguments, reply in
                if let problem = Self.nonFinite(arguments, of: method) {
                    reply(.failure(ServiceError(.invalidArgument, "\(name).\(method.name): \(problem)")))
                    return
                }
                onLoop(bound) { plugin in plugin.call(name, method.name, arguments, reply) }
            }
        }
        return services.mapValues { $0 as any Service }
    }

    // MARK: Starting and stopping

    /// How long the answer to `initialize` may take: the call time limit, but never less than 30 s
    /// (an interpreter starting on a loaded machine is slow, and a short limit is for calls).
    var startTimeout: Double { max(callTimeout, 30) }

    /// The program's stdout closed or broke: it is gone. Calls in flight answer `unavailable`;
    /// a first start in the background fails with `startFailure` (else with `reason`).
    func ended(_ run: ProcessRun, reason: String, startFailure: String? = nil) {
        guard let running, running === run else { return }
        let first = firstAnswer
        firstAnswer = nil
        self.running = nil
        runs += 1
        running.close()
        // A start that failed gets longer to end by itself: its status may say why.
        let status = running.process.reap(grace: initializing ? 1 : 0.2)
        var reason = reason
        // A start that ended for want of memory says so (it read "exited" only).
        if startFailure == nil, initializing || first != nil,
           PluginMemoryShortage.explains(status: status, said: saidOutOfMemory,
                                         limitMiB: manifest.permissions.memoryMiB ?? PluginPermissions.defaultMemoryMiB) {
            reason = PluginMemoryShortage.reason(manifest)
        }
        let calls = inFlight.values
        inFlight.removeAll()
        for call in calls {
            call.answer(.failure(ServiceError(.unavailable, "plugin '\(manifest.name)' \(reason) during the call; it starts again on the next call")))
        }
        if initializing {
            initializing = false
            startJob?.cancel()
            startJob = nil
            let starting = waiting
            waiting.removeAll()
            for call in starting {
                call.answer(.failure(ServiceError(.unavailable, "plugin '\(manifest.name)' \(reason) before answering 'initialize'; it starts again on the next call")))
            }
        }
        if answeredInThisRun {
            backoff.reset()
            restartAt = nil
        } else {
            restartAt = host.clock.uptime + backoff.advance()
        }
        if let first {
            first(.failure(PluginProblem(startFailure ?? "it \(reason) before answering 'initialize'")))
        } else if !isFinished {
            log(.warn, "\(reason)")
        }
    }

    /// Shuts the program down: `shutdown`, stdin closed, killed when it has not exited 2 s later.
    func finish() {
        guard !isFinished else { return }
        isFinished = true
        restartJob?.cancel()
        startJob?.cancel()
        deadlines.cancelAll()
        for call in waiting + Array(inFlight.values) {
            call.answer(.failure(ServiceError(.unavailable, "the host is shutting down")))
        }
        waiting.removeAll()
        inFlight.removeAll()
        guard let running else { return }
        self.running = nil
        // What the program started, found while it still is their parent: a child that left
        // its process group (setsid) is killed as well, whatever the program does on shutdown.
        let strays = running.process.descendants()
        // Written straight to the pipe: the loop may not turn again before the process exits.
        let shutdown = JSONRPCMessage.request(id: .integer(nextID), method: "shutdown", params: .null)
        running.flushDirectly(extra: shutdown.line)
        running.close()
        running.process.reap(grace: 2)
        PluginProcess.killStrays(strays)
    }

    // MARK: Logging

    func log(_ level: HostOptions.LogLevel, _ message: String) {
        host.log(level, plugin: manifest.name, message)
    }
}
