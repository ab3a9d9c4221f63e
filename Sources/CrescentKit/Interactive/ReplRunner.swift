import CPlatform
import Dispatch
import LuaBridge
public import Model
import NIOCore
import NIOPosix
import LineEditing
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs the interactive REPL on the terminal until the user leaves: the engine of `crescent repl`
/// (and of `crescent` with a terminal on stdin).
///
/// The host runs on a one-thread NIO loop as for a script, with `--ui plain` so views print above
/// the prompt. A thread reads the terminal (in raw mode throughout) and hands bytes to the loop;
/// a Ctrl-C typed while a chunk's code runs interrupts that code from the reader thread, since the
/// loop is busy. SIGTERM ends the session with 143, SIGHUP with 129; SIGINT from outside interrupts
/// a running chunk. The terminal is given back on each, and on exit() or a crash (the C guard).
public enum ReplRunner {
    /// Runs the REPL and returns the exit status (0 when the user leaves, else what `app.exit` or
    /// a signal asked for; 1 when the terminal cannot be used, 2 for a bad configuration).
    ///
    /// - Parameters:
    ///   - banner: the first line printed.
    ///   - historyPath: the history file (default: `CRESCENT_HISTORY`, else
    ///     `~/.local/share/crescent/history`).
    public static func run(options: HostOptions, plugins: [any Plugin] = [], banner: String,
                           historyPath: String? = nil) -> Int32 {
        var plainOptions = options
        plainOptions.ui = .plain
        // Views print on the terminal: their control characters as escapes.
        plainOptions.outputIsTerminal = true
        let options = plainOptions
        let terminal = Terminal.standard
        let saved: Terminal.SavedMode
        do {
            saved = try terminal.enableRawMode()
        } catch {
            Console(colors: false).error("crescent: cannot use the terminal for the REPL: \(error)")
            return 1
        }
        // exit() or a crash gives the terminal back too: its mode, and bracketed paste off
        // (the prompt turns it on while reading).
        TerminalSession.armGuard(terminal, restoring: saved, writing: PromptSession.pasteOff)
        defer {
            crescent_terminal_disarm()
            terminal.restore(saved)
        }

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let exit = loop.makePromise(of: Int32.self)
        let link = ReplLink(loop: loop, terminal: terminal)
        let console = Console(colors: options.colors, capture: { _, text in link.emit(text) }, flush: { link.flush() })
        let history = historyPath.map(HistoryFile.init(path:)) ?? HistoryFile.standard()

        let scriptInterrupter: LuaInterrupter
        let pluginInterrupters: PluginInterrupters
        let host: NIOLoopBound<Host>
        let hostLink: HostLink
        let listen: Value
        do {
            (host, hostLink, scriptInterrupter, pluginInterrupters, listen) = try loop.submit {
                let host = try Host(loop: loop, options: options, console: console, plugins: plugins) { status in
                    link.finish()
                    link.withRepl { $0.hostFinished() }
                    exit.succeed(status)
                }
                host.setArguments(scriptName: options.interpreter, hasScript: false)
                try host.routeStandardOutputThroughConsole()
                let repl = Repl(host: host, link: link, historyFile: history)
                link.attach(repl)
                repl.start(banner: banner)
                return (NIOLoopBound(host, eventLoop: loop), host.link, host.vm.interrupter, host.pluginInterrupters,
                        host.hostSettings["listen"])
            }.wait()
        } catch let error as HostSetupError {
            terminal.restore(saved)
            console.error("crescent: \(error)")
            exit.succeed(2)
            return 2
        } catch {
            terminal.restore(saved)
            console.error("crescent: \(error)")
            exit.succeed(1)
            return 1
        }

        do throws(RemoteError) {
            _ = try RemoteServer.startIfAsked(host: host, options: options, setting: listen, defaultName: "repl", exclusive: false, script: "repl")
        } catch {
            console.error("crescent: \(error)")
            link.turn { $0.quit(status: 2) }
            return (try? exit.futureResult.wait()) ?? 2
        }

        let interrupter = CodeInterrupter(script: scriptInterrupter, plugins: pluginInterrupters)
        readTerminal(link: link, interrupter: interrupter)
        let resize = ResizeMonitor { link.turn { $0.resize() } }
        defer { resize.cancel() }
        let signals = DispatchQueue(label: "crescent.repl.signals")
        let sources = SignalSources.start([SIGINT, SIGTERM, SIGHUP], on: signals) { number in
            if number != SIGINT {
                // SIGTERM 143, SIGHUP (the terminal closed) 129, as a script's run.
                let status: Int32 = number == SIGTERM ? 143 : 129
                pluginInterrupters.interrupt(status: status, timeout: false)
                Host.stop(hostLink, interrupter: scriptInterrupter, status: status, timeout: false)
            } else {
                interruptChunk(link: link, interrupter: interrupter)
            }
        }
        defer { for source in sources { source.cancel() } }

        let status = (try? exit.futureResult.wait()) ?? 1
        console.flush()
        return status
    }

    /// Reads the terminal on a thread of its own until the end of input.
    private static func readTerminal(link: ReplLink, interrupter: CodeInterrupter) {
        DispatchQueue(label: "crescent.repl.input").async {
            let question = TerminalQuestion.shared.readerStarted(TerminalQuestion.Reader(
                show: { text in link.withRepl { $0.showQuestion(text) } },
                answered: { yes in link.withRepl { $0.showAnswer(yes) } }))
            defer { TerminalQuestion.shared.readerEnded(question) }
            while var bytes = link.terminal.read() {
                if TerminalQuestion.shared.offer(bytes) { continue }
                if bytes.contains(3) {
                    if link.chunkRunning.load(ordering: .relaxed) {
                        // The loop is busy running the chunk: interrupt it from here.
                        bytes.removeAll { $0 == 3 }
                        interruptChunk(link: link, interrupter: interrupter)
                    } else if loopIsStuck(link) {
                        // Code other than a chunk (a timer, a handler) has kept the loop for a
                        // while since an earlier Ctrl-C: interrupt it too. The key still goes to
                        // the prompt (a slow loop must never lose keys; there it clears the line).
                        interrupter.interruptRunningCode()
                    } else {
                        _ = link.interruptPostedAt.compareExchange(expected: 0, desired: NIODeadline.now().uptimeNanoseconds, ordering: .relaxed)
                    }
                }
                let input = bytes
                link.turn { $0.receive(input) }
            }
            link.turn { $0.endOfInput() }
        }
    }

    /// Interrupts the chunk's running code, or cancels the chunk when it waits.
    private static func interruptChunk(link: ReplLink, interrupter: CodeInterrupter) {
        if link.chunkRunning.load(ordering: .relaxed) { interrupter.interruptRunningCode() }
        link.turn { repl in
            if case .running(let task) = repl.phase { repl.interrupt(task) }
            repl.clearStrayInterrupt()
        }
    }

    /// Ctrl-C's reach: the script's VM and every plugin VM (a chunk may be stuck in a plugin's
    /// method it called, or a plugin's timer may hold the loop).
    private struct CodeInterrupter: Sendable {
        let script: LuaInterrupter
        let plugins: PluginInterrupters

        func interruptRunningCode() {
            script.interruptRunningCode()
            plugins.interruptRunningCode()
        }
    }

    /// Whether a Ctrl-C handed to the loop has waited there for more than a second.
    private static func loopIsStuck(_ link: ReplLink) -> Bool {
        let posted = link.interruptPostedAt.load(ordering: .relaxed)
        return posted != 0 && NIODeadline.now().uptimeNanoseconds - posted > 1_000_000_000
    }
}
