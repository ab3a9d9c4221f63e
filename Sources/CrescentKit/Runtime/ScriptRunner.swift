import LuaBridge
public import Model
import Dispatch
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
    public static func run(_ source: ScriptSource, bytes: [UInt8], options: HostOptions, plugins: [any Plugin] = [],
                           console: Console? = nil, scriptName: String? = nil) -> Int32 {
        let console = console ?? Console(colors: options.colors)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let exit = loop.makePromise(of: Int32.self)

        let started: (host: NIOLoopBound<Host>, interrupter: LuaInterrupter)
        do {
            started = try loop.submit {
                let host = try Host(loop: loop, options: options, console: console, plugins: plugins) { exit.succeed($0) }
                return (NIOLoopBound(host, eventLoop: loop), host.vm.interrupter)
            }.wait()
        } catch let error as HostSetupError {
            console.error("crescent: \(error)")
            return 2
        } catch {
            console.error("crescent: \(error)")
            return 1
        }

        let signals = DispatchQueue(label: "crescent.signals")
        var sources: [any DispatchSourceSignal] = []
        for (number, status) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: signals)
            source.setEventHandler {
                Host.stop(started.host, interrupter: started.interrupter, status: status, timeout: false)
            }
            source.resume()
            sources.append(source)
        }
        defer { for source in sources { source.cancel() } }
        if let timeout = options.timeout {
            signals.asyncAfter(deadline: .now() + .nanoseconds(Int(min(timeout * 1e9, 9e18)))) {
                Host.stop(started.host, interrupter: started.interrupter, status: 1, timeout: true)
            }
        }

        let scriptPath: String? = if case .file(let path) = source { path } else { nil }
        let argZero = scriptName ?? (scriptPath == nil && { if case .standardInput = source { true } else { false } }() ? "-" : nil)
        loop.execute {
            started.host.value.runMain(source: bytes, chunkName: source.chunkName, scriptPath: scriptPath, argZero: argZero)
        }
        let status = (try? exit.futureResult.wait()) ?? 1
        console.flush()
        return status
    }
}
