public import Model
import Glibc
import Synchronization

/// A program started with `process:spawn(argv[, options])`: `pid`, `running`, `write(data)`,
/// `closeInput()`, `kill([signal])`, `wait()`, events `didOutput { stream, line }` and
/// `didExit { status, signal }`.
///
/// Its caller's owner holds it (``OwnedModelObject``): the program starts being read once the
/// host holds it, keeps the run alive while it runs, and its whole process group is killed when
/// that owner ends first. Spawned inside a script's `task`, it also ends with that task (SIGTERM,
/// then SIGKILL after the grace) unless `outliveTask = true` was given.
///
/// ```lua
/// local build = services.process:spawn({ "make", "-j4" }, { cwd = "src" })
/// build:on("didOutput", function(out) print(out.stream, out.line) end)
/// build:on("didExit", function(result) print("make ended", result.status, result.signal) end)
/// ```
public final class SpawnedProcess: OwnedModelObject {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }
    private let backend: Backend
    private let reactor: DescriptorReactor
    private let state = Mutex<State>(State())
    public let endsWithTask: Bool
    /// SIGTERM to the group now, SIGKILL after the grace (the service times it on its clock).
    private let endGently: @Sendable (ChildProcess) -> Void

    /// What runs behind it.
    private enum Backend: Sendable {
        /// A real program, read by the reactor, and its start (under way on a launch thread
        /// until it has happened).
        case program(ChildProcess, ProgramLaunch)
        /// `fake.process` in a spec: the answer to `spec`, asked for when the host holds it.
        case faked(ProcessSpec, ProcessService.Exchange, pid: Int32)
    }

    /// What the loop reads and what `wait` waits for.
    private struct State {
        /// How it ended, or why it never started.
        var ending: Result<ProcessOutcome, ServiceError>?
        var waiting: [Reply] = []
        var finished: (@Sendable () -> Void)?
        var started = false
        /// False once `closeInput()` ran, or when `options.stdin` gave all of it.
        var inputOpen = true
        /// What ends a faked program's answer early (one that takes time), once it is asked for.
        var stopFake: (@Sendable () -> Void)?
    }

    /// Reports handed to the loop and not yet taken in past which the program's pipes are not
    /// read: 60 MB of output cost ~1 GB of host memory queued for a handler that was slower. A
    /// report carries at most ``ChildProcess/batchLines`` lines, so about 2,000 lines wait.
    static let backlogLimit = 8

    init(launch: ProgramLaunch, reactor: DescriptorReactor, clock: any ServiceClock,
         onExit: @escaping @Sendable () -> Void, endGently: @escaping @Sendable (ChildProcess) -> Void) {
        let spec = launch.prepared.spec
        self.reactor = reactor
        endsWithTask = !spec.outliveTask
        self.endGently = endGently
        // The child's callbacks reach this object weakly: the script may drop it while the
        // program runs on (the owner's share keeps it until then anyway).
        let link = WeakBox<SpawnedProcess>()
        backend = .program(ChildProcess(launch, splitsLines: true, reactor: reactor, callbacks: .init(
            lines: { stream, lines in link.object?.emitLines(stream, lines) },
            exited: { result in
                onExit()
                link.object?.ended(result)
            },
            holdsBack: { (link.object?.changes.backlog ?? 0) > Self.backlogLimit },
            retryLater: {
                let child = link.object?.childForTimeout
                _ = clock.schedule(after: .milliseconds(5)) { reactor.submit { child?.resumeOutput() } }
            })), launch)
        link.object = self
        if spec.stdin != nil { state.withLock { $0.inputOpen = false } }
    }

    /// A program that was never started (a Swift caller dropped it before ``start()``) has no
    /// one to read it or wait for it: its group is killed and the reactor reaps it, rather than
    /// leave it running and then a zombie for the host's life.
    deinit {
        guard case .program(let child, let launch) = backend, !state.withLock({ $0.started }) else { return }
        launch.signal(SIGKILL)
        reactor.submit { child.start() }
    }

    /// A process that `exchange` answers for (`fake.process`): its output and end come from
    /// the answer, on a later turn, once the host holds it.
    init(faking spec: ProcessSpec, exchange: @escaping ProcessService.Exchange, reactor: DescriptorReactor) {
        self.reactor = reactor
        endsWithTask = !spec.outliveTask
        endGently = { _ in }
        backend = .faked(spec, exchange, pid: Self.fakePids.add(1, ordering: .relaxed).newValue)
        if spec.stdin != nil { state.withLock { $0.inputOpen = false } }
    }

    /// `didOutput` for each of `lines` of `stream`, in order, as one report: the lines of one
    /// read reach the loop in one hop and one queue entry, and are delivered one by one.
    private func emitLines(_ stream: String, _ lines: [ChildProcess.OutputLine]) {
        let name = Value.string(stream)
        var payloads: [Value] = []
        payloads.reserveCapacity(lines.count)
        for line in lines {
            payloads.append(.model(DataModel(Self.outputSchema, [name, .bytes(line.bytes), .bool(line.cut)])))
        }
        changes.emit("didOutput", payloads: payloads)
    }

    /// The fields of `didOutput`'s payload, declared once: a misspelled read (`out.lin`) names
    /// them, where a plain table read nil.
    static let outputSchema = ModelSchema("processOutput", ["stream", "line", "truncated"])

    /// The reactor's side of it, for the service's timeout.
    var childForTimeout: ChildProcess? {
        if case .program(let child, _) = backend { return child }
        return nil
    }

    /// The program's pid (also its group's): waits for its start when that is still under way
    /// (at most one `posix_spawn`, ``ProgramLaunch/pid``); nil when it did not start. A faked
    /// program has one of its own (code that logs or keys by pid behaves as with a real one).
    public var launchedPid: Int32? {
        switch backend {
        case .program(_, let launch): launch.pid
        case .faked(_, _, let pid): pid
        }
    }

    /// The pids faked programs get: past the largest pid Linux gives (`pid_max` is at most
    /// 4,194,304), so a faked pid never names a real process (`kill` on it fails).
    private static let fakePids = Atomic<Int32>(5_000_000)

    /// ``launchedPid``, 0 when there is none.
    public var pid: Int32 { launchedPid ?? 0 }

    /// Whether the program still runs (or is still starting).
    public var isRunning: Bool { state.withLock { $0.ending == nil } }

    /// How it ended, once it has (nil also when it never started: ``startFailure``).
    public var outcome: ProcessOutcome? { state.withLock { try? $0.ending?.get() } }

    /// Why it never started, when its start failed after the call's checks (the exec's error).
    public var startFailure: ServiceError? {
        state.withLock { state in
            guard case .failure(let error) = state.ending else { return nil }
            return error
        }
    }

    public func adopt(finished: @escaping @Sendable () -> Void) {
        let already: Bool = state.withLock { state in
            if state.ending != nil { return true }
            state.finished = finished
            return false
        }
        if already { finished() }
        start()
    }

    /// Starts reading its output (``adopt(finished:)`` does it for scripts; Swift callers call it).
    public func start() {
        guard state.withLock({ state in defer { state.started = true }; return !state.started }) else { return }
        switch backend {
        case .program(let child, _):
            reactor.submit { child.start() }
        case .faked(let spec, let exchange, _):
            // Answered now (on the loop, by the spec), delivered from another thread so the
            // script has subscribed by then, as with a real program's output.
            let reactor = self.reactor
            let link = WeakBox<SpawnedProcess>()
            link.object = self
            // A kill ends it here (``kill(signal:)``) and stops the answer that was to come.
            let stop = exchange(spec) { result in
                reactor.submit { link.object?.playBack(result, limit: spec.maxBytes) }
            }
            state.withLock { $0.stopFake = stop }
        }
    }

    /// A faked program's answer as a real one would come: its lines, then its end.
    private func playBack(_ result: Result<ProcessOutcome, ServiceError>, limit: Int) {
        guard isRunning else { return }
        var outcome: ProcessOutcome
        switch result {
        case .success(let answer): outcome = answer
        case .failure(let error):
            outcome = ProcessOutcome(status: 127, stderr: Array(error.message.utf8))
        }
        for (stream, bytes) in [("stdout", outcome.stdout), ("stderr", outcome.stderr)] where !bytes.isEmpty {
            var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            if bytes.last == UInt8(ascii: "\n") { lines.removeLast() }
            // Cut at maxBytes as the reader cuts a real program's line.
            emitLines(stream, lines.map { line in
                let text = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
                return (Array(text.prefix(limit)), text.count > limit)
            })
        }
        outcome.stdout = []
        outcome.stderr = []
        ended(.success(outcome))
    }

    public func ownerEnded() {
        kill(signal: SIGKILL)
    }

    public func taskEnded() {
        guard isRunning else { return }
        switch backend {
        case .program(let child, _): endGently(child)
        case .faked: kill(signal: SIGTERM)
        }
    }

    /// Sends `signal` to the program's whole group (nothing once it has ended).
    public func kill(signal: Int32) {
        switch backend {
        case .program(let child, _) where signal == SIGTERM:
            // SIGTERM as a timeout sends it: the group gets the grace before SIGKILL, also
            // what the program started when the program itself exits at once.
            guard isRunning else { return }
            endGently(child)
        case .program(_, let launch):
            // Nothing once it has ended: what it started may still have the grace after a
            // SIGTERM (``ChildProcess/Phase/lingering``), which its owner's end must not cut.
            guard isRunning else { return }
            // At once, not through the reactor: at teardown the process may exit before the
            // reactor's next turn. Before its start, as soon as it has started.
            launch.signal(signal)
        case .faked:
            // A faked program ends at any signal, as most programs do; its answer, if it was
            // still to come (a `duration`), comes no more (queued after this end, it is dropped).
            reactor.submit { [weak self] in
                guard let self, self.isRunning else { return }
                self.ended(.success(ProcessOutcome(status: nil, signal: ProcessOutcome.signalName(signal))))
            }
            state.withLock { $0.stopFake }?()
        }
    }

    /// Queues `bytes` for its stdin; they are dropped when the program has ended or closed it.
    ///
    /// - Throws: `invalid_argument` when the script closed the input itself (``closeInput()``,
    ///   or `options.stdin`), which it knows in the same turn.
    public func write(_ bytes: [UInt8]) throws(ServiceError) {
        let (running, open) = state.withLock { ($0.ending == nil, $0.inputOpen) }
        guard open else {
            throw ServiceError(.invalidArgument, "the stdin of process \(pid) is closed (closeInput() was called, or options.stdin gave all of it)")
        }
        // An end the script cannot see yet: `running` changes between turns, so a write the
        // script guarded with it raised "has ended" in the same turn. Dropped instead, as the
        // bytes of a program that closed its stdin are; `running`, `didExit` and `wait()` tell
        // of the end. A faked program reads nothing.
        guard running, case .program(let child, _) = backend else { return }
        reactor.submit { _ = child.write(bytes) }
    }

    /// Closes its stdin once what was written has gone.
    public func closeInput() {
        state.withLock { $0.inputOpen = false }
        guard case .program(let child, _) = backend else { return }
        reactor.submit { child.closeInput() }
    }

    /// Answers `reply` with `{ status, signal }` once the program has ended, or with the error
    /// its start failed with.
    func wait(_ reply: Reply) {
        let ending: Result<ProcessOutcome, ServiceError>? = state.withLock { state in
            if state.ending == nil { state.waiting.append(reply) }
            return state.ending
        }
        if let ending { reply(ending.map(\.exitValue)) }
    }

    /// Its end: `didExit` with how it ended, or, for a start that failed, with `error` (the
    /// message naming the program) and neither status nor signal; `wait()` answers that error.
    private func ended(_ ending: Result<ProcessOutcome, ServiceError>) {
        let (waiting, finished): ([Reply], (@Sendable () -> Void)?) = state.withLock { state in
            guard state.ending == nil else { return ([], nil) }
            state.ending = ending
            defer { state.waiting.removeAll(); state.finished = nil }
            return (state.waiting, state.finished)
        }
        changes.propertyChanged("running", to: false)
        switch ending {
        case .success(let outcome): changes.emit("didExit", outcome.exitValue)
        case .failure(let error): changes.emit("didExit", ProcessOutcome.failedStartValue(error.message))
        }
        for reply in waiting { reply(ending.map(\.exitValue)) }
        finished?()
    }
}
