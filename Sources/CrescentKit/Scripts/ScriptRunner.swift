import CPlatform
import LuaBridge
public import Model
import Services
import Dispatch
import Synchronization
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Runs one script to completion on a real event loop: the engine of `crescent run`.
///
/// The calling thread becomes the host's event loop for the run (no loop thread to start, hand
/// the host to and join: those hand-offs were a fifth of `crescent -e ''`). The run stops on
/// SIGINT (exit 130), SIGTERM (143), SIGHUP (129) or `--timeout` (1), and the function returns
/// the exit status once the host has torn down and the loop has shut down.
public enum ScriptRunner {
    /// Runs `source`, whose contents are `bytes` (from ``ScriptSource/read()``), and returns the
    /// process exit status (DESIGN.md "The event loop"). Blocks the calling thread, which must not
    /// be an event loop's, until then.
    ///
    /// - Parameters:
    ///   - plugins: the service plugins the host loads.
    ///   - console: where output goes (default: stdout and stderr).
    ///   - readsCommands: once a controller is pushed, read stdin lines as its commands (DESIGN:
    ///     `crescent run` with a non-TTY stdin). Scripts without controllers keep stdin for `io.read`.
    ///   - readsKeys: once a controller is pushed, take the terminal (stdin and stdout) for a
    ///     person to drive the app (DESIGN.md "Interaction on a terminal"); Ctrl-C stops the run
    ///     as SIGINT does.
    public static func run(_ source: ScriptSource, bytes: [UInt8], options: HostOptions, plugins: [any Plugin] = [],
                           console: Console? = nil, scriptName: String? = nil, readsCommands: Bool = false,
                           readsKeys: Bool = false) -> Int32 {
        run(source, bytes: bytes, options: options, plugins: plugins, console: console, scriptName: scriptName,
            readsCommands: readsCommands, readsKeys: readsKeys, hostMade: nil)
    }

    /// ``run(_:bytes:options:plugins:console:scriptName:readsCommands:readsKeys:)``, handing its
    /// host to `hostMade` as soon as it is made: a test checks the host is freed when the run returns.
    static func run(_ source: ScriptSource, bytes: [UInt8], options: HostOptions, plugins: [any Plugin],
                    console: Console?, scriptName: String?, readsCommands: Bool, readsKeys: Bool,
                    hostMade: ((Host) -> Void)?) -> Int32 {
        let console = console ?? Console(colors: options.colors)
        let scriptPath: String? = if case .file(let path) = source { path } else { nil }
        let argZero = scriptName ?? (scriptPath == nil && { if case .standardInput = source { true } else { false } }() ? "-" : nil)
        let stopping = StopState()
        var foreground: ForegroundWatch?
        // Threads first, while nothing has run: a run that could not start one later hung for
        // ever inside libdispatch, deaf to SIGTERM (see ``StopThread``).
        let stopThread: StopThread
        do throws(StopThreadError) {
            stopThread = try StopThread.start()
        } catch {
            console.error("crescent: \(error)")
            return 1
        }
        if let shortage = ThreadShortage.probe(threadHeadroom, for: "the threads a run needs") {
            stopThread.stop()
            console.error("crescent: \(shortage)")
            return 1
        }
        startDispatch()

        MultiThreadedEventLoopGroup.withCurrentThreadAsEventLoop { loop in
            let exit = loop.makePromise(of: Int32.self)
            exit.futureResult.whenSuccess { status in
                stopping.status.store(status, ordering: .relaxed)
                // NIO closes a loop asked from itself by hopping to the queue it is given. The
                // global queue's worker that ``startDispatch()`` started is idle by now and takes
                // the hop; a queue of its own (an overcommitting one) started a thread of its own
                // for it at the end of every run. A worker libdispatch cannot start (the first
                // one's idle time is up in a long run) it retries for ever, here, on the loop:
                // when this process cannot start a thread now, it ends without closing the loop.
                if let shortage = ThreadShortage.probe(1, for: "the thread that closes the event loop") {
                    stopping.finished.store(true, ordering: .relaxed)
                    stopping.exitNow(stopping.finalStatus, console: console, reason: shortage)
                }
                loop.shutdownGracefully(queue: .global()) { _ in }
            }
            let host: Host
            do {
                host = try Host(loop: loop, options: options, console: console, plugins: plugins) { exit.succeed($0) }
            } catch let error as HostSetupError {
                console.error("crescent: \(error)")
                exit.succeed(2)
                return
            } catch {
                console.error("crescent: \(error)")
                exit.succeed(1)
                return
            }
            hostMade?(host)
            let link = host.link
            if readsCommands { host.onFirstController = { readCommands(into: link) } }
            let interrupter = host.vm.interrupter
            let pluginInterrupters = host.pluginInterrupters

            /// Stops gracefully; if the script cannot be stopped (it is stuck inside a C function,
            /// where the interrupt hook never runs) the process exits anyway after a grace period,
            /// and a second signal exits at once.
            let stop: @Sendable (Int32, Bool, Bool) -> Void = { status, timeout, interrupting in
                if stopping.requests.add(1, ordering: .relaxed).newValue > 1 && !timeout {
                    stopping.exitNow(status, console: console, reason: "a second signal")
                }
                Host.stop(link, interrupter: interrupter, status: status, timeout: timeout, interrupting: interrupting)
                // After the script's VM: plugin code that holds the loop returns into a script
                // already told to stop.
                pluginInterrupters.interrupt(status: status, timeout: timeout)
                stopThread.after(StopState.gracePeriod) {
                    if !stopping.finished.load(ordering: .relaxed) {
                        stopping.exitNow(status, console: console, reason: "the script did not stop within \(Int(StopState.gracePeriod)) s",
                                          pastGrace: true)
                    }
                }
            }
            if readsKeys {
                // What the first controller prints as it loads (`viewDidLoad`) is the app's: held
                // for the status line and written out after the run, as what its handlers print.
                host.onFirstControllerLoading = { link.onLoop { host in host.holdOutputForTerminal() } }
                host.onFirstController = {
                    link.onLoop { host in host.startTerminalSession(script: scriptPath) { stop(130, false, true) } }
                }
            }
            // A signal decides the run's status even when it comes while the host is already
            // closing (a Ctrl-C that ended the program an `io.popen` left open, which the closing
            // waited for, made the run end 0).
            let signalled: @Sendable (Int32, Bool) -> Void = { status, interrupting in
                _ = stopping.signalStatus.compareExchange(expected: 0, desired: status, ordering: .relaxed)
                stop(status, false, interrupting)
            }
            stopThread.take([SIGINT, SIGTERM, SIGHUP]) { number in
                signalled(number == SIGINT ? 130 : number == SIGTERM ? 143 : 129, true)
            }
            // A Ctrl-C that only os.execute's program saw (os.execute ignores SIGINT in its
            // caller while the program runs) stops the run as it would have, as shells do: the
            // running code at its next instruction, the rest from the stop thread, as for
            // SIGINT (on the loop, the stop would close the VM under os.execute).
            // The running code is interrupted here, once: the stop that follows must not set the
            // flag again from the stop thread, where it could land after the host had cleared
            // it to tear down and stop a teardown action ("error while tearing down: interrupted").
            host.onProgramInterrupted = {
                interrupter.interrupt(status: 130)
                stopThread.after(0) { signalled(130, false) }
            }
            if options.ui == .live {
                // A job started in the background drew nothing over the shell and could not take
                // the keys: brought to the foreground, it shows its view and, once a controller
                // is pushed, takes the terminal.
                foreground = ForegroundWatch(queue: DispatchQueue(label: "crescent.signals")) {
                    if readsKeys {
                        link.onLoop { host in
                            guard host.navigationDepth > 0 else { return }
                            host.startTerminalSession(script: scriptPath) { stop(130, false, true) }
                        }
                    }
                    link.turn { host in host.presenter.redrawInForeground() }
                }
            }
            if let timeout = options.timeout {
                stopThread.after(timeout) { stop(1, true, true) }
            }

            let bound = NIOLoopBound(host, eventLoop: loop)
            let runMain: @Sendable () -> Void = {
                bound.value.runMain(source: bytes, chunkName: source.chunkName, scriptPath: scriptPath, argZero: argZero)
            }
            let requested: String?
            do throws(RemoteError) {
                requested = try RemoteServer.requestedName(options: options, setting: host.hostSettings["listen"])
            } catch {
                console.error("crescent: \(error)")
                host.finish(status: 2)
                return
            }
            guard let requested else {
                loop.execute(runMain)
                return
            }
            // Starting remote control waits on the loop, so it starts from another thread; the main
            // chunk runs once it listens.
            DispatchQueue(label: "crescent.listen").async {
                do throws(RemoteError) {
                    _ = try RemoteServer.start(host: bound, requested: requested,
                                               defaultName: scriptPath.map(RemoteServer.defaultName(forScript:)) ?? "crescent",
                                               exclusive: scriptPath != nil, script: scriptPath ?? String(source.chunkName.dropFirst()))
                    loop.execute(runMain)
                } catch {
                    console.error("crescent: \(error)")
                    loop.execute { bound.value.finish(status: 2) }
                }
            }
        }
        stopping.finished.store(true, ordering: .relaxed)
        stopThread.stop()
        foreground?.cancel()
        console.flush()
        return stopping.finalStatus
    }

    /// Threads a run starts besides its own and the ``StopThread`` (libdispatch's manager and a
    /// worker, the process and files services' reactor): a process that cannot start them all
    /// at first does not run the script, and says what ran out.
    static let threadHeadroom = 3

    /// Starts libdispatch's manager thread (and a worker) now, just after the probe saw room for
    /// them. Its first use otherwise came late, from the loop's thread (the VM's close watch as
    /// the run ended, a service's timer), and libdispatch retried a thread it could not start
    /// there for ever. Once it runs, Dispatch's timers are a write to it from the loop.
    static func startDispatch() {
        let ran = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now()) { ran.signal() }
        _ = ran.wait(timeout: .now() + .seconds(2))
    }
}

/// Whether a stop was asked for, whether the run has finished and how, shared with the signal queue.
final class StopState: Sendable {
    /// How long a stopped script may take to tear down before the process exits regardless.
    static let gracePeriod = 2.0
    let requests = Atomic<Int>(0)
    let finished = Atomic<Bool>(false)
    /// The run's exit status, once the host has reported it (1 if the loop ended without one).
    let status = Atomic<Int32>(1)
    /// The status of the first signal that stopped the run (130 for SIGINT), which is the run's
    /// when the host's own would be 0; 0 before any.
    let signalStatus = Atomic<Int32>(0)

    /// The status the process ends with: a signal that came while the host was closing turns
    /// a success into its status; a status the run had chosen (app.exit(3), an error's 1)
    /// stays, as it did before the signal (a test's SIGTERM after app.exit(3) made it 143).
    var finalStatus: Int32 {
        let own = status.load(ordering: .relaxed)
        return own != 0 ? own : signalStatus.load(ordering: .relaxed)
    }

    /// Exits the process at once with `status`, saying why.
    /// Process plugins still running are killed, group and all, and named.
    func exitNow(_ status: Int32, console: Console, reason: String, pastGrace: Bool = false) -> Never {
        // `_exit` runs no atexit handler: the programs scripts and plugins started go here,
        // group and all, and those `io.popen` and `os.execute` started, which skip their `pclose`.
        let plugins = ProcessGroups.killAll()
        ProcessTree.killDescendants()
        var said = reason
        if !plugins.isEmpty {
            let stuck = "plugin " + plugins.map { "'\($0)'" }.joined(separator: ", ") + " did not stop (its process group was killed)"
            // Past the grace period it is the plugin that held the teardown, not the script.
            said = pastGrace ? stuck + " within \(Int(Self.gracePeriod)) s" : reason + "; " + stuck
        }
        // The teardown did not give the terminal back: the guard does (a no-op when not armed).
        crescent_terminal_restore()
        console.error("crescent: exiting with status \(status): \(said)")
        _exit(status)
    }
}
