public import Model
import Glibc
import Synchronization

/// `services.process`: programs run without blocking the loop.
///
/// `run(argv[, options])` answers `{ status, signal, stdout, stderr, truncated, timedOut }` once
/// the program has exited; `spawn(argv[, options])` hands back a ``SpawnedProcess`` at once.
/// No shell is involved unless `shell = true`. Each program runs in a process group of its own;
/// the program's own exit (what it left in the background goes with it), cancelling a `run`,
/// ending the owner of a `run` or a spawned process, releasing the service (the run's end) and
/// the host's exit kill that whole group with SIGKILL. A program spawned in a script's task
/// ends with the task (``SpawnedProcess/taskEnded()``: SIGTERM, then SIGKILL after the grace)
/// unless `outliveTask` is set. `timeout` sends
/// SIGTERM to the group, then SIGKILL after ``ProcessSpec/killGrace`` seconds, both timed by the
/// host's clock. Output past `maxBytes` per stream (default 10 MiB) is read and dropped, and the
/// result says `truncated = true`.
///
/// All the pipes of all programs are read and written by one thread (``DescriptorReactor``), so
/// hundreds of programs at once cost the loop only their results. A program's exit is seen
/// through a pidfd, its output left in the pipes is read, and it is reaped there: no zombie and
/// no descriptor stays behind.
///
/// ```lua
/// local result, err = services.process:run({ "git", "pull" }, { cwd = "src", timeout = 60 })
/// if err then print(err) elseif result.status ~= 0 then print(result.stderr) end
/// ```
public final class ProcessService: Service {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }

    private let clock: any ServiceClock
    /// Answers every program in place of running it when set (``Exchange``).
    private let exchange: Exchange?
    /// The permission seam: every program is checked here before it starts, and the spec the
    /// check answers (its program's file found) is what runs.
    private let access: ServiceAccess
    private let reactor = DescriptorReactor.shared
    /// The programs this service started that still run, by launch: killed when it goes.
    private let live = Mutex<[ObjectIdentifier: ProgramLaunch]>([:])

    /// - Parameters:
    ///   - clock: what times `timeout` and the grace after it (the host's clock).
    ///   - access: what the caller may run (``ServiceAccess/unrestricted`` for scripts).
    ///   - exchange: answers every program instead of running it (`crescent test`'s
    ///     `fake.process`); nil to run them.
    public init(clock: any ServiceClock = SystemClock.shared, access: ServiceAccess = .unrestricted, exchange: Exchange? = nil) {
        self.clock = clock
        self.access = access
        self.exchange = exchange
    }

    /// Answers one program without running it: called on the caller's thread with what would
    /// run and the completion to call exactly once (from any thread) with how it ended and
    /// what it wrote; returns what ends it early (a faked program that takes time, killed by
    /// its caller's cancel), which then completes with that end.
    public typealias Exchange = @Sendable (ProcessSpec, @escaping @Sendable (Result<ProcessOutcome, ServiceError>) -> Void) -> @Sendable () -> Void

    /// The run ended (the host let go of its services): nothing it started runs on.
    deinit {
        for launch in live.withLock({ $0.values }) { launch.signal(SIGKILL) }
    }

    /// The standard plugin's entry: made on first use with the host's clock.
    static func entry(_ context: PluginContext) -> ServiceEntry {
        let clock = context.clock
        return ServiceEntry(ProcessService.self) { () throws(ServiceError) in ProcessService(clock: clock) }
    }

    /// The same service (its clock, its fakes) for a caller running only what `access` lets
    /// it: a plugin. The programs it starts are its own, killed when it goes.
    public func restricted(to access: ServiceAccess) -> ProcessService {
        ProcessService(clock: clock, access: access, exchange: exchange)
    }

    /// The entry a plugin's host gets for `process` in place of `entry` (the host's), running
    /// programs through `access` (the plugin's grants).
    public static func entry(over entry: ServiceEntry, access: ServiceAccess) -> ServiceEntry {
        ServiceEntry(named: serviceName, declaration: { declaration }) { () throws(ServiceError) in
            guard let process = try entry.service() as? ProcessService else {
                throw ServiceError(.internal, "the process service is not the standard one")
            }
            return process.restricted(to: access)
        }
    }

    /// How many programs this service started still run.
    public var runningCount: Int { live.withLock { $0.count } }

    // MARK: run

    /// Runs `spec` and returns how it ended, with its output. Cancelling the calling task
    /// kills the program's group.
    ///
    /// - Throws: `invalid_argument`, `not_found`, `permission`, `io` when it cannot start;
    ///   `cancelled`.
    public func run(_ spec: ProcessSpec) async throws(ServiceError) -> ProcessOutcome {
        let cancellation = Cancellation()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                do throws(ServiceError) {
                    let stop = try start(spec) { continuation.resume(returning: $0) }
                    cancellation.onCancel(stop)
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        // Killed because the caller cancelled: that is the answer, not the SIGKILL it died of.
        if cancellation.isCancelled { throw ServiceError(.cancelled, "the run of '\(clipped(spec.programName))' was cancelled") }
        return try result.get()
    }

    /// Starts `spec` and calls `completion` once, on the reactor thread, when it has exited;
    /// returns what kills its group (callable from any thread, more than once).
    func start(_ spec: ProcessSpec,
               completion: @escaping @Sendable (Result<ProcessOutcome, ServiceError>) -> Void) throws(ServiceError) -> @Sendable () -> Void {
        let spec = try access.checkRun(spec)
        if let exchange {
            let limit = spec.maxBytes
            return exchange(spec) { result in completion(result.map { $0.kept(to: limit) }) }
        }
        try reactor.ensureRunning()
        let launch = ProgramLaunch(try ProcessLauncher.prepare(spec, keepInputOpen: false))
        track(launch)
        let deadline = Cancellation()
        let untrack = untracker()
        let child = ChildProcess(launch, splitsLines: false, reactor: reactor, callbacks: .init(
            lines: nil,
            exited: { [weak launch] result in
                if let launch { untrack(launch) }
                deadline.cancel()
                completion(result)
            }))
        let reactor = self.reactor
        reactor.submit { child.start() }
        launch.enqueue(on: .shared) { result in reactor.submit { child.launched(result) } }
        scheduleTimeout(spec, child, deadline)
        return { launch.signal(SIGKILL) }
    }

    // MARK: spawn

    /// Starts `spec` and hands back the program at once: the checks that name a program that
    /// cannot start run here, the start itself on a launch thread (``ProgramLaunch``); its output
    /// is read from ``SpawnedProcess/start()`` on (the host calls it once it holds the object).
    public func spawn(_ spec: ProcessSpec) throws(ServiceError) -> SpawnedProcess {
        let spec = try access.checkRun(spec)
        // A faked program ends through the reactor too (its kill).
        try reactor.ensureRunning()
        if let exchange { return SpawnedProcess(faking: spec, exchange: exchange, reactor: reactor) }
        let launch = ProgramLaunch(try ProcessLauncher.prepare(spec, keepInputOpen: spec.stdin == nil))
        track(launch)
        let deadline = Cancellation()
        let untrack = untracker()
        let (reactor, clock) = (self.reactor, self.clock)
        let process = SpawnedProcess(launch: launch, reactor: reactor, clock: clock, onExit: { [weak launch] in
            if let launch { untrack(launch) }
            deadline.cancel()
        }, endGently: { child in
            reactor.submit { child.terminate() }
            Self.killAfterGrace(spec, child, reactor: reactor, clock: clock)
        })
        if let child = process.childForTimeout {
            launch.enqueue(on: .shared) { result in reactor.submit { child.launched(result) } }
            scheduleTimeout(spec, child, deadline)
        }
        return process
    }

    // MARK: Groups

    private func track(_ launch: ProgramLaunch) {
        live.withLock { $0[ObjectIdentifier(launch)] = launch }
    }

    /// What forgets a program once it has ended; it holds the service weakly, so
    /// a program outliving the service (killed by its deinit) does not keep it alive.
    private func untracker() -> @Sendable (ProgramLaunch) -> Void {
        return { [weak self] launch in self?.live.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(launch)) } }
    }

    /// `timeout`: SIGTERM to the group, then SIGKILL after the grace, both on the host's clock;
    /// `deadline` cancelled (by the exit) first means neither happens.
    private func scheduleTimeout(_ spec: ProcessSpec, _ child: ChildProcess, _ deadline: Cancellation) {
        guard let timeout = spec.timeout else { return }
        let reactor = self.reactor
        let clock = self.clock
        let first = clock.schedule(after: .seconds(seconds: timeout)) {
            reactor.submit { child.timeOut() }
            Self.killAfterGrace(spec, child, reactor: reactor, clock: clock)
        }
        deadline.onCancel { first.cancel() }
    }

    /// SIGKILL to the group ``ProcessSpec/killGrace`` seconds after the SIGTERM sent now, also
    /// when the program exits first: what it started in its group gets the whole grace too
    /// (``ChildProcess/Phase/lingering``); nothing once the group is gone.
    private static func killAfterGrace(_ spec: ProcessSpec, _ child: ChildProcess,
                                       reactor: DescriptorReactor, clock: any ServiceClock) {
        _ = clock.schedule(after: .seconds(seconds: spec.killGrace)) { reactor.submit { child.killAfterGrace() } }
    }
}
