import CrescentKit
import Dispatch
import Foundation
import Model
import Synchronization

/// One script run to completion on a real NIO event loop (`ScriptRunner`), for anything that
/// involves Swift tasks (the `slow` method): EmbeddedEventLoop is not thread-safe.
///
/// `ScriptRunner.run` blocks its thread until the script ends, so it runs on a thread of its own:
/// blocking one of the (few) cooperative threads the tests run on could starve the Swift tasks
/// the script itself waits for.
struct RealLoopRun: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String
    /// Wall-clock seconds the run took.
    let seconds: Double

    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Runs `source` as `test.lua` (so messages say `test.lua:N:`) with the thermostat plugin.
    ///
    /// The default time limit only ends a run that hangs. It is far above what any run needs
    /// because its Swift tasks share the test process's cooperative threads (two here): a
    /// fixture that blocks them, such as the first use of the shared PostgreSQL cluster while
    /// `initdb` runs on a loaded machine, held every such run for about 20 s in one `make test`.
    /// Under a sanitizer (``Sanitizer``), which slows every run several times, it is ten times
    /// longer: it still only ends a run that hangs.
    static func run(_ source: String, thermostat: Thermostat = Thermostat(), timeout: Double? = Sanitizer.active == nil ? 90 : 900,
                    failFast: Bool = false) async -> RealLoopRun {
        var options = HostOptions()
        options.timeout = timeout
        options.failFast = failFast
        return await run(source, options: options, plugins: [ThermostatPlugin(thermostat)])
    }

    /// Runs `source` as `test.lua` with `options` and `plugins`, on a thread of its own.
    static func run(_ source: String, options: HostOptions, plugins: [any Plugin]) async -> RealLoopRun {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: RealLoopRun(source, options: options, plugins: plugins))
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    private init(_ source: String, options: HostOptions, plugins: [any Plugin]) {
        final class Output: Sendable {
            let stdout = Mutex("")
            let stderr = Mutex("")
        }
        let output = Output()
        let console = Console(colors: false) { stream, text in
            switch stream {
            case .output: output.stdout.withLock { $0 += text }
            case .error: output.stderr.withLock { $0 += text }
            }
        }
        let started = DispatchTime.now().uptimeNanoseconds
        // `.file` only names the chunk here: the bytes are given, nothing is read from disk.
        status = ScriptRunner.run(.file("test.lua"), bytes: Array(source.utf8), options: options,
                                  plugins: plugins, console: console)
        seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        stdout = output.stdout.withLock { $0 }
        stderr = output.stderr.withLock { $0 }
    }
}
