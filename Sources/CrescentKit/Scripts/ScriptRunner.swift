import LuaBridge
public import Model
import Dispatch
import Synchronization
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Runs one script to completion on a real event loop: the engine of `crescent run`.
///
/// It reads the source, starts a one-thread NIO event loop that owns the host, stops the run on
/// SIGINT (exit 130), SIGTERM (143) or `--timeout` (1), and returns the exit status once the
/// host has torn down.
public enum ScriptRunner {
    /// Runs `source`, whose contents are `bytes` (from ``ScriptSource/read()``), and returns the
    /// process exit status (DESIGN.md "The event loop").
    ///
    /// - Parameters:
    ///   - plugins: the service plugins the host loads.
    ///   - console: where output goes (default: stdout and stderr).
    ///   - readsCommands: once a controller is pushed, read stdin lines as its commands (DESIGN:
    ///     `crescent run` with a non-TTY stdin). Scripts without controllers keep stdin for `io.read`.
    public static func run(_ source: ScriptSource, bytes: [UInt8], options: HostOptions, plugins: [any Plugin] = [],
                           console: Console? = nil, scriptName: String? = nil, readsCommands: Bool = false) -> Int32 {
        let console = console ?? Console(colors: options.colors)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let exit = loop.makePromise(of: Int32.self)

        let started: (host: NIOLoopBound<Host>, link: HostLink, interrupter: LuaInterrupter, listen: Value, plugins: PluginInterrupters)
        do {
            started = try loop.submit {
                let host = try Host(loop: loop, options: options, console: console, plugins: plugins) { exit.succeed($0) }
                let link = host.link
                if readsCommands { host.onFirstController = { readCommands(into: link) } }
                return (NIOLoopBound(host, eventLoop: loop), link, host.vm.interrupter, host.hostSettings["listen"], host.pluginInterrupters)
            }.wait()
        } catch let error as HostSetupError {
            console.error("crescent: \(error)")
            exit.succeed(2)   // never leave the promise unfulfilled
            return 2
        } catch {
            console.error("crescent: \(error)")
            exit.succeed(1)
            return 1
        }

        let scriptPath: String? = if case .file(let path) = source { path } else { nil }
        do throws(RemoteError) {
            _ = try RemoteServer.startIfAsked(host: started.host, options: options, setting: started.listen, defaultName: scriptPath.map(RemoteServer.defaultName(forScript:)) ?? "crescent",
                                              exclusive: scriptPath != nil, script: scriptPath ?? String(source.chunkName.dropFirst()))
        } catch {
            console.error("crescent: \(error)")
            loop.execute { started.host.value.finish(status: 2) }
            _ = try? exit.futureResult.wait()
            return 2
        }

        let signals = DispatchQueue(label: "crescent.signals")
        let stopping = StopState()
        /// Stops gracefully; if the script cannot be stopped (it is stuck inside a C function, where
        /// the interrupt hook never runs) the process exits anyway after a grace period, and a
        /// second signal exits at once.
        let stop: @Sendable (Int32, Bool) -> Void = { status, timeout in
            if stopping.requests.add(1, ordering: .relaxed).newValue > 1 && !timeout {
                stopping.exitNow(status, console: console, reason: "a second signal")
            }
            Host.stop(started.link, interrupter: started.interrupter, status: status, timeout: timeout)
            // After the script's VM: plugin code that holds the loop returns into a script
            // already told to stop.
            started.plugins.interrupt(status: status, timeout: timeout)
            signals.asyncAfter(deadline: .now() + .milliseconds(Int(StopState.gracePeriod * 1000))) {
                if !stopping.finished.load(ordering: .relaxed) {
                    stopping.exitNow(status, console: console, reason: "the script did not stop within \(Int(StopState.gracePeriod)) s")
                }
            }
        }
        var sources: [any DispatchSourceSignal] = []
        for (number, status) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: signals)
            source.setEventHandler { stop(status, false) }
            source.resume()
            sources.append(source)
        }
        defer { for source in sources { source.cancel() } }
        if let timeout = options.timeout {
            signals.asyncAfter(deadline: .now() + .nanoseconds(Int(min(timeout * 1e9, 9e18)))) { stop(1, true) }
        }

        let argZero = scriptName ?? (scriptPath == nil && { if case .standardInput = source { true } else { false } }() ? "-" : nil)
        loop.execute {
            started.host.value.runMain(source: bytes, chunkName: source.chunkName, scriptPath: scriptPath, argZero: argZero)
        }
        let status = (try? exit.futureResult.wait()) ?? 1
        stopping.finished.store(true, ordering: .relaxed)
        console.flush()
        return status
    }
}

extension ScriptRunner {
    /// Reads stdin lines on a thread of their own and hands each to the host's loop as a command.
    /// The end of piped input (a pipe or a file) is a last `quit`, after the commands before it
    /// have run, unless `--keep-running` keeps the controllers until they pop or exit. A device
    /// (`< /dev/null`, the usual way to give a background job no input) never held commands: its
    /// end ends nothing.
    static func readCommands(into host: HostLink) {
        var status = stat()
        let isDevice = fstat(0, &status) == 0 && status.st_mode & S_IFMT == S_IFCHR
        DispatchQueue(label: "crescent.commands").async {
            while let line = readLine() {
                host.turn { host in host.receiveCommandLine(line) }
            }
            guard !isDevice else { return }
            host.turn { host in
                if !host.options.keepsRunningAfterInput { host.receiveCommandLine("quit") }
            }
        }
    }
}

/// Whether a stop was asked for, and whether the run has finished, shared with the signal queue.
final class StopState: Sendable {
    /// How long a stopped script may take to tear down before the process exits regardless.
    static let gracePeriod = 2.0
    let requests = Atomic<Int>(0)
    let finished = Atomic<Bool>(false)

    /// Exits the process at once with `status`, saying why.
    func exitNow(_ status: Int32, console: Console, reason: String) -> Never {
        console.error("crescent: exiting with status \(status): \(reason)")
        _exit(status)
    }
}
