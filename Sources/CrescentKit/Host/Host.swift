public import LuaBridge
public import Model
public import NIOCore
import LineEditing

/// The host: one Lua VM owned by one event loop, and everything scripts reach through globals.
///
/// All Lua runs on `loop`. Work enters through ``enqueue(_:)``; after each job the host ends the
/// turn: it flushes output and, once the main chunk has returned and nothing can produce more work
/// (no live timer, no running task), it tears down and reports the exit status.
///
/// Tests drive a host on NIO's `EmbeddedEventLoop` and advance its clock by hand.
///
/// ```swift
/// let host = try Host(loop: loop, options: options) { status in exit(status) }
/// host.runMain(source: bytes, chunkName: "@hello.lua", scriptPath: "hello.lua")
/// ```
public final class Host {
    /// The VM. Touch it only on `loop`.
    public let vm: LuaVM
    /// The loop that owns the VM.
    public let loop: any EventLoop
    public let options: HostOptions
    public let console: Console
    /// The one clock of the run: timers, `sleep` and every service read time and wait through it.
    /// A spec file's host (``restartModel(services:clock:)``) takes a new one for each test.
    public internal(set) var clock: any ServiceClock
    /// Lets work from other threads onto the loop until the host finishes (``HostLink``); the
    /// system clock schedules its jobs through it too. A spec file's host opens a new one for each
    /// test: what the test before started can no longer reach the loop through the old one.
    var gate: LoopGate

    /// Where the run is: the main chunk, then the work it started, then the end.
    enum RunState: Equatable {
        /// The main chunk has not returned yet.
        case runningMain
        /// The main chunk returned; the run goes on while anything can still produce work.
        case mainFinished
        /// `app.exit`, `quit`, a signal, the time limit or `--fail-fast` asked the run to end
        /// with `status` at the end of the turn (the first request wins).
        case exitRequested(status: Int32)
        /// Torn down and reported (``finish(status:)``): nothing runs any more.
        case finished(status: Int32)
    }

    /// Set only by the turn machinery and ``finish(status:)`` (Host+exit.swift).
    var runState = RunState.runningMain

    /// The exit status once the host has finished, else nil.
    public var exitStatus: Int32? {
        if case .finished(let status) = runState { return status }
        return nil
    }
    /// The status an exit was requested with, until the run finishes.
    var requestedExit: Int32? {
        if case .exitRequested(let status) = runState { return status }
        return nil
    }
    /// True once any error was reported from a handler (the run will exit 1).
    public internal(set) var sawError = false
    /// Whether ``finish(status:)`` reports the finalizers that failed as the VM closed (and makes
    /// a 0 status 1). A spec file's host leaves them to its teardown, which fails the test with them.
    var reportsFinalizerFailuresAtClose = true
    /// While a remote client's chunk runs: where a copy of each line for stderr goes (the
    /// warnings the chunk causes, which the host's own stderr alone hid from the client).
    var errorCopy: ((String) -> Void)?
    /// While a remote client's chunk runs: tells that client a line at once, though the loop is
    /// held (a permission question it waits on), where its other output waits for the loop.
    var remoteNotice: ((String) -> Void)?

    /// Who the Lua code running now works for (its scope and task, whether a turn runs),
    /// shared with the binding, which reads it on every call and delivery.
    let running = RunningCode()
    /// The script's scope: owns what the main chunk and its handlers start, ends at exit.
    public var scriptScope: Scope { running.scriptScope }
    /// The owner of what Lua code starts right now (the script, or a controller).
    var currentScope: Scope {
        get { running.currentScope }
        set { running.currentScope = newValue }
    }
    /// The services, their binding and the observer registry. Lazy only because the binding
    /// refers back to the finished host: `init` touches it first, so it exists from then on.
    private(set) lazy var binding = ModelBinding(host: self, running: running, vm: vm, tables: bindingTables) { [unowned self] report in
        self.report(registryEvent: report)
    }
    /// What the binding shares with the VM, made right after it (the binding's own copy is the
    /// one in use; this one only hands it over).
    let bindingTables: BindingTables
    /// Controllers on the navigation stack: while there are any, the run goes on.
    var navigationDepth = 0
    /// True while a turn runs (a clock job that fires meanwhile waits for a later turn).
    var inTurn: Bool {
        get { running.inTurn }
        set { running.inTurn = newValue }
    }
    /// Called once, when the first controller is pushed (the runner starts reading commands).
    public var onFirstController: (() -> Void)?
    /// Called once, as the first controller starts loading (before its `init`, `loadView` and
    /// `viewDidLoad`): a run that gives it the terminal holds what it prints from there.
    public var onFirstControllerLoading: (() -> Void)?
    /// Called when a program `os.execute` ran was ended by SIGINT: a Ctrl-C os.execute kept from
    /// the host (it ignores SIGINT while it waits, as `system` does). A plain run stops as
    /// SIGINT would have stopped it; nil elsewhere (`crescent test` wraps `os.execute` itself).
    /// Called on the loop, inside `os.execute`: it must not finish the host there.
    var onProgramInterrupted: (() -> Void)?
    /// Shows the top controller's view in the `--ui` mode.
    let presenter: ViewPresenter
    /// The terminal while a person drives the app from it (``startTerminalSession(_:onInterrupt:)``).
    var terminalSession: TerminalSession?
    /// What the run printed meanwhile, written out when the terminal is given back.
    var terminalTranscript: TerminalTranscript?
    /// The last error written before the terminal was taken (``writeError(_:)``) and before
    /// output was held for it (an error of the main chunk before `app.push`): it is on the main
    /// screen the alternate screen hides, so the terminal session shows it on the status line as
    /// it starts.
    var errorBeforeTerminal: String?
    /// The `:` command line while the terminal session runs, else nil.
    var commandLine: CommandLineState?
    /// Where the command line's history is kept (per script), or nil.
    var commandHistoryFile: HistoryFile?
    /// The key or command handler running while the terminal session runs (its busy indicator,
    /// and what a Ctrl-C stops), else nil.
    var busyHandler: BusyHandler?
    /// Whether the busy indicator's next look is scheduled on the clock.
    var busyCheckScheduled = false
    /// The folder of the running script (for `require` and template files).
    var scriptFolder: String?
    var reportedTimeout = false
    // Read at the end of every turn (``hasPendingWork``) and around every resume, on the loop
    // only. Like ``RunningCode``'s, no access to these is held across a call that could come back
    // to them (inserting into or removing from the sets calls only the timer's or task's
    // identity hash).
    var timers: Set<LuaTimer> = []
    var tasks: Set<LuaTask> = []
    /// Coroutines whose task returned, each with an empty stack, run again by later tasks.
    var idleCoroutines: [LuaCoroutine] = []
    /// The task whose coroutine is running, while it runs.
    var currentTask: LuaTask? {
        get { running.currentTask }
        set { running.currentTask = newValue }
    }
    var teardownActions: [() -> Void] = []
    /// Who runs the Lua code running now when it is a remote client's (`remote client 3`): its
    /// `os.exit` is refused and its `app.exit` logged, since it ends the host for everyone.
    var remoteCaller: String?
    /// The table of the functions the controller prelude offers the host (the REPL's command
    /// completion): empty until the prelude has loaded, when a run first uses it
    /// (``loadedControllerHooks()``); nil in a plugin's host.
    var controllerHooks: LuaRef?
    /// The function of the controllers' stand-ins that loads the controller prelude (if it has
    /// not loaded) and returns its hooks; nil in a plugin's host.
    var controllersLoader: LuaRef?
    /// The config file's `[host]` section.
    public let hostSettings: Value
    let onExit: (Int32) -> Void
    /// The host whose script uses this plugin host's services (nil for a script's host).
    var parent: Host? { parentLink?.object }
    private let parentLink: WeakLink<Host>?
    /// What tasks, timers, plugin hosts and the plugin launcher refer to the host by
    /// (``Model/WeakLink``: a `weak` reference would put every retain of the host on the slow
    /// path). Cleared when the host finishes, on its loop, or when it goes unfinished.
    var weakLink = WeakLink<Host>()
    /// Set for a spec file's host: ``finish(status:)`` tears the model down but keeps the VM, which
    /// ``restartModel(services:clock:)`` gives a fresh model for the file's next test.
    var keepsVM = false
    /// False for a spec file's host: a process plugin is a program, which the code under test
    /// may not start there (its service is the spec's to fake, as programs and the network are).
    var startsPluginPrograms = true
    /// The teardown actions the host's own set-up registered (the controllers' prelude's): they
    /// come back for each restarted model.
    var setupTeardownActions: [() -> Void] = []
    /// Interrupts the Lua plugins' VMs too when the run is stopped (Ctrl-C, `--timeout`).
    public let pluginInterrupters = PluginInterrupters()
    /// The Lua plugins this host started, finished with it.
    var pluginRuntimes: [LuaPluginRuntime] = []
    /// Starts the folder plugins (nil in a plugin's host: its parent's starts them).
    var pluginLauncher: PluginLauncher?
    /// The plugin folders found but not loaded, named by the error of `services.NAME` for one.
    private(set) var skippedPlugins: [SkippedPlugin] = []
    /// In a Lua plugin's host (with a real-time clock): gives each turn of the plugin's code its
    /// time limit.
    var turnWatchdog: RunawayWatchdog?
    /// In a Lua plugin's host: told of a handler stopped for the time limit (`context` says
    /// which), answers what to report instead when the turn's limit stopped it (the plugin then
    /// stops), nil when something else did (the run's `--timeout`).
    var onRunaway: ((_ error: LuaError, _ context: String) -> (context: String, message: String)?)?

    /// Creates the VM, makes the plugins' services and installs the globals.
    ///
    /// - Parameters:
    ///   - plugins: the service plugins (`[.standard, MyPlugin()]`).
    ///   - clock: the run's clock, handed to every service; nil for the system's, scheduling on
    ///     `loop` (tests and `crescent test` pass a ``Model/ManualClock``).
    ///   - onExit: called once, on the loop, with the exit status after teardown.
    /// - Throws: ``HostSetupError`` for a bad config file or a plugin that refuses its settings,
    ///   ``LuaBridge/LuaError`` when the VM cannot start.
    public convenience init(loop: any EventLoop, options: HostOptions, console: Console? = nil, plugins: [any Plugin] = [],
                            clock: (any ServiceClock)? = nil, onExit: @escaping (Int32) -> Void) throws {
        let gate = LoopGate()
        let clock = clock ?? SystemClock(scheduler: Host.scheduler(on: loop, through: gate))
        let launcher = PluginLauncher()
        let setup = try ServiceFactory.setup(plugins: plugins, options: options, clock: clock, launcher: launcher)
        try self.init(loop: loop, options: options, console: console, services: setup.entries, clock: clock,
                      gate: gate, plugin: nil, hostSettings: setup.hostSection, onExit: onExit)
        launcher.attach(self)
        pluginLauncher = launcher
        skippedPlugins = setup.skipped
        for notice in setup.notices {
            writeError("\(self.console.styled("crescent:", notice.hasPrefix("warning") ? .warning : .error)) \(notice)")
        }
    }

    /// A host with the given services. A plugin's host (`plugin` set) runs a Lua plugin's VM
    /// beside its parent's, on the same loop: it has no `app`, `view` or `controller`, never
    /// finishes on its own, and reports its handlers' errors to its parent's run too.
    init(loop: any EventLoop, options: HostOptions, console: Console?, services: [ServiceEntry],
         clock: any ServiceClock, gate: LoopGate, plugin parent: Host?, hostSettings: Value = .object([:]),
         onExit: @escaping (Int32) -> Void) throws {
        self.loop = loop
        self.hostSettings = hostSettings
        self.gate = gate
        self.clock = clock
        self.options = options
        self.console = console ?? Console(colors: options.colors)
        self.onExit = onExit
        parentLink = parent?.weakLink
        vm = try LuaVM(memoryLimit: options.memoryLimitMiB > 0 ? options.memoryLimitMiB << 20 : nil)
        // Making a host only builds what stays (its tables, the prelude): the collector's steps
        // meanwhile freed nothing and cost a share of every test host's making.
        let collecting = vm.pauseCollector()
        bindingTables = try BindingTables(vm: vm)
        presenter = ViewPresenter(mode: options.ui, console: self.console, width: options.columns,
                                   escapesControls: options.outputIsTerminal)
        weakLink.attach(self)
        try installGlobals()
        try binding.install(services: services)
        // Last: the controller prelude captures observe/on (from the binding).
        if !isPluginHost { try installControllers() }
        setupTeardownActions = teardownActions
        if collecting { vm.resumeCollector() }
    }

    deinit { weakLink.clear() }

    /// True for the host of a Lua plugin's VM (whether or not its parent is still there).
    var isPluginHost: Bool { parentLink != nil }
    /// The Lua plugin this host runs, named in the errors it reports (nil in a script's host).
    var pluginName: String?

    /// True while the host can still run code.
    public var isRunning: Bool { exitStatus == nil }

    /// Anything that can still produce work keeps the run alive.
    var hasPendingWork: Bool {
        navigationDepth > 0 || !timers.isEmpty || !tasks.isEmpty || binding.hasPendingWork
    }

    // MARK: Turns

    /// Runs `job` on the loop as one turn of its own, later, unless the host has finished by then.
    public func enqueue(_ job: @escaping (Host) -> Void) {
        let bound = NIOLoopBound(self, eventLoop: loop)
        let boundJob = NIOLoopBound(job, eventLoop: loop)
        // On the loop (NIOLoopBound checks it) the gate's lock is not needed: the gate closes in
        // ``finish(status:)``, on this loop, so while the run goes on it is open and the loop runs
        // until the hop is taken. Taking the lock here contended with a service's thread that held
        // it through its own hop's wake-up of this loop: the loop spun in the lock (seen in a
        // file watch's rename-to-handler path).
        guard isRunning else { return }
        loop.execute {
            bound.value.runTurn(boundJob.value)
        }
    }

    /// How work from other threads reaches this host (see ``HostLink``); made on the loop.
    public var link: HostLink { HostLink(bound: NIOLoopBound(self, eventLoop: loop), gate: gate) }

    /// Runs `job` on the loop: inside the current turn when one is running, else as a turn that
    /// ends (flush, render, deliveries, the exit rule) after it. Nothing runs once the host has
    /// finished.
    public func runTurn(_ job: (Host) -> Void) {
        guard isRunning else { return }
        guard !inTurn else {
            job(self)
            return
        }
        inTurn = true
        turnWatchdog?.turn(started: true)
        job(self)
        turnWatchdog?.turn(started: false)
        inTurn = false
        endTurn()
    }

    /// Schedules a clock's jobs on `loop`: a timer's job then runs on the loop with no hop. They
    /// wait in a ``LoopTimerQueue`` (cancelling one is O(log n), where NIO's own scheduler made it
    /// O(n)). Work scheduled after teardown is dropped: the loop may be shut down by then, and
    /// nothing of the run is left for it to serve (a store poller's next round, say).
    private static func scheduler(on loop: any EventLoop, through gate: LoopGate) -> SystemClock.Scheduler {
        let queue = LoopTimerQueue(loop: loop, gate: gate)
        return { delay, work in queue.schedule(after: delay, work) }
    }

    /// Flushes output, and finishes the run when it is over.
    public func endTurn() {
        guard isRunning else { return }
        reportFinalizerFailures()
        if requestedExit == nil { binding.scheduleDelivery() }
        binding.flushOwnEventWarnings()
        showPrintedMessage()
        presenter.renderIfNeeded()
        console.flush()
        if let code = requestedExit {
            // `quit` and `app.exit(0)` end the run, they do not forgive its errors: an explicit
            // non-zero status wins, a zero one becomes 1 when a handler failed.
            finish(status: code == 0 && sawError ? 1 : code)
        } else if runState == .mainFinished && !hasPendingWork && !isPluginHost {
            noteRunEndedOnItsOwn()
            finish(status: sawError ? 1 : 0)
        }
    }

    /// Runs `body` with `scope` as the owner of whatever Lua code starts meanwhile (see
    /// ``RunningCode/withScope(_:_:)``).
    func withScope<Result>(_ scope: Scope?, _ body: () throws -> Result) rethrows -> Result {
        try running.withScope(scope, body)
    }

    // MARK: The main chunk

    /// Compiles and runs the main chunk with `arguments` as `...`, then ends the turn.
    ///
    /// - Parameters:
    ///   - chunkName: `@path` for files, `=label` otherwise.
    ///   - scriptPath: the script's path for `arg[0]` and `require` (nil for `-e` code).
    public func runMain(source: [UInt8], chunkName: String, scriptPath: String?, argZero: String? = nil) {
        runTurn { host in host.runMainChunk(source: source, chunkName: chunkName, scriptPath: scriptPath, argZero: argZero) }
    }

    private func runMainChunk(source: [UInt8], chunkName: String, scriptPath: String?, argZero: String?) {
        setArguments(scriptName: argZero ?? scriptPath ?? options.interpreter, hasScript: argZero != nil || scriptPath != nil)
        if let scriptPath { addScriptFolderToPath(scriptPath) }
        do {
            // `-e` chunks before the last, in order; one that asked to exit ends the run there.
            var exiting = false
            for chunk in options.precedingChunks where !exiting {
                try callMainChunk(Array(chunk.utf8), name: chunkName)
                exiting = requestedExit != nil
            }
            if !exiting { try callMainChunk(source, name: chunkName) }
        } catch {
            if !handleControlFlow(error) {
                report(error)
                requestExit(1)
            }
        }
        if runState == .runningMain { runState = .mainFinished }
    }

    /// Compiles `source` and calls it with the script's arguments as `...`.
    private func callMainChunk(_ source: [UInt8], name chunkName: String) throws(LuaError) {
        try vm.load(source, name: chunkName)
        let stack = vm.stack
        _ = stack.ensure(Int32(clamping: options.argumentBytes.count) + 1)
        for argument in options.argumentBytes { argument.withUnsafeBytes { stack.push(bytes: $0) } }
        try vm.call(arguments: Int32(options.argumentBytes.count), results: 0)
    }

    // MARK: Errors

    /// Prints an error from a handler (timer, task, observer…), marks the run failed and, with
    /// `--fail-fast`, stops it.
    public func reportHandlerError(_ error: LuaError, in context: String) {
        if error.kind == .timeout, let onRunaway, let runaway = onRunaway(error, context) {
            vm.clearInterrupt()
            reportHandlerError(LuaError(.runtime, runaway.message), in: runaway.context)
            return
        }
        if handleControlFlow(error) { return }
        report(error, context: context)
        sawError = true
        if let parent {
            parent.sawError = true
            if parent.options.failFast { parent.requestExit(1) }
        }
        if options.failFast { requestExit(1) }
    }

    /// Counts a failure already shown to the user (a piped command that was refused): the run
    /// exits 1 and `--fail-fast` stops it, as after a handler's error.
    func countFailure() {
        sawError = true
        if options.failFast { requestExit(1) }
    }

    /// Reports what the observer registry saw: handler failures (with the subscription's site),
    /// subscriptions cancelled after repeated failures, and cycles.
    func report(registryEvent: ObserverRegistry.Report) {
        switch registryEvent {
        case .handlerFailed(let subscription, let error):
            let luaError = error as? LuaError ?? LuaError(.runtime, String(describing: error))
            reportHandlerError(luaError, in: "error in \(subscription.targetDescription) handler (subscribed at \(subscription.site))")
        case .autoCancelled(let subscription):
            writeError("\(console.styled("crescent: warning:", .warning)) cancelled the \(subscription.targetDescription) handler subscribed at \(subscription.site) after \(subscription.errors) consecutive errors")
        case .cycle(let what):
            writeError("\(console.styled("crescent: warning:", .warning)) observer cycle: handlers kept changing \(what) for \(binding.registry.maxChainedRounds) turns in a row; dropped those deliveries")
            sawError = true
        }
    }

    /// Reports the `__gc` finalizers that raised while the run went on as a handler's error: Lua
    /// itself only warns of them, so a failing finalizer was silent.
    func reportFinalizerFailures() {
        guard let failures = vm.takeFinalizerFailures(), !Self.isInterruption(failures.first) else { return }
        reportHandlerError(LuaError(.runtime, failures.first), in: Self.finalizerContext(failures, when: ""))
    }

    /// A finalizer stopped by an interrupt (a client's, a Ctrl-C, the time limit, an exit) did
    /// not fail: the stop is reported where it was asked for.
    private static func isInterruption(_ message: String) -> Bool {
        ["interrupted", "exiting", "interrupted: time limit reached"].contains { message == $0 || message.hasSuffix(": " + $0) }
    }

    /// `error in a __gc finalizer[ when][ (and N more)]`.
    static func finalizerContext(_ failures: LuaVM.FinalizerFailures, when: String) -> String {
        "error in a __gc finalizer" + when + (failures.count > 1 ? " (and \(failures.count - 1) more)" : "")
    }

    /// Prints `crescent: [context: ]message` (the message carries `file:line` and a traceback,
    /// its host frames folded after the script's: see ``TracebackFolding``).
    func report(_ error: LuaError, context: String? = nil) {
        let label = console.styled("crescent:", .error)
        var message = GlobalNameHint.hinted(TracebackFolding.folded(error.message), in: vm, isPlugin: isPluginHost)
        // A plugin's error (a memory error above all) names the plugin it happened in.
        if let pluginName, !(message + (context ?? "")).contains("plugin '\(pluginName)'") { message = "plugin '\(pluginName)': " + message }
        if let context {
            writeError("\(label) \(context): \(message)")
        } else {
            writeError("\(label) \(message)")
        }
    }

    /// Writes a line to stderr, first taking a live view off the screen so the two never mix.
    func writeError(_ line: String) {
        presenter.clearForOutput()
        if terminalTranscript == nil { errorBeforeTerminal = line }
        console.error(line)
        errorCopy?(line)
    }

    /// Writes `crescent: warning: FILE:LINE: message`, at the line of the Lua code calling.
    func warnAtCaller(_ message: String, _ stack: LuaStack) {
        writeError(warningAtCaller(message, stack))
    }

    /// The line ``warnAtCaller(_:_:)`` writes, for a warning written later.
    /// A call through a controller helper (`self:on("didFail", "failed")`) has the helper's
    /// frames between: the place is the script's line past them, and a message naming the
    /// global (`on(…)`) names the helper the script wrote (`self:on(…)`).
    func warningAtCaller(_ message: String, _ stack: LuaStack) -> String {
        var place = stack.place(level: 1)
        var text = message
        if place.isEmpty || place.hasPrefix("[crescent") {
            // A script's call is a few prelude frames out at most.
            place = stack.innermostFilePlace(levels: 12) ?? place
            if stack.hasFrame(source: "=[crescent controllers_helpers]", levels: 12),
               ["on(", "observe("].contains(where: { text.hasPrefix($0) }) {
                text = "self:" + text
            }
        }
        return "\(console.styled("crescent: warning:", .warning)) \(place)\(text)"
    }
}

/// `2`, `0.5`: seconds without a trailing `.0`.
func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(seconds)
}
