import CrescentKit
import LuaBridge
import Model
import NIOCore
import NIOEmbedded
import Synchronization

/// A host on NIO's EmbeddedEventLoop and a manual clock: virtual time for the host and its
/// services alike, captured output, the exit status recorded.
final class TestHost {
    let loop = EmbeddedEventLoop()
    let clock: ManualClock
    let host: Host
    private let output = Output()

    final class Output: Sendable {
        let stdout = Mutex("")
        let stderr = Mutex("")
        let status = Mutex<Int32?>(nil)
    }

    /// - Parameters:
    ///   - wallTime: what the clock's wall time reads at the start (seconds since 1970).
    ///   - memoryLimitMiB: the VM's memory limit (`--memory-limit`), else the default.
    init(failFast: Bool = false, arguments: [String] = [], plugins: [any Plugin] = [], wallTime: Double = 1_767_225_600,
         memoryLimitMiB: Int? = nil) throws {
        clock = ManualClock(wallTime: wallTime)
        var options = HostOptions()
        options.failFast = failFast
        options.arguments = arguments
        if let memoryLimitMiB { options.memoryLimitMiB = memoryLimitMiB }
        let output = self.output
        let console = Console(colors: false) { stream, text in
            switch stream {
            case .output: output.stdout.withLock { $0 += text }
            case .error: output.stderr.withLock { $0 += text }
            }
        }
        host = try Host(loop: loop, options: options, console: console, plugins: plugins, clock: clock) { status in
            output.status.withLock { $0 = status }
        }
        let loop = NIOLoopBound(loop, eventLoop: loop)
        clock.onSettle { loop.value.run() }
    }

    /// A host still running when its test ends is finished (its VM's functions hold it until
    /// then), and the loop drops the jobs left on it (they hold the clock, whose settle handler
    /// holds the loop): without both, every test host stays allocated, which LeakSanitizer
    /// (`make sanitize`) reports.
    deinit {
        if host.isRunning { host.finish(status: 0) }
        try? loop.syncShutdownGracefully()
    }

    /// Runs `source` as the main chunk of `test.lua`.
    func run(_ source: String) {
        host.runMain(source: Array(source.utf8), chunkName: "@test.lua", scriptPath: nil, argZero: "test.lua")
    }

    /// Moves virtual time forward, running every timer and service job that comes due, in order.
    func advance(seconds: Double) {
        clock.advance(by: .seconds(seconds: seconds))
    }

    var stdout: String { output.stdout.withLock { $0 } }
    var stderr: String { output.stderr.withLock { $0 } }
    var exitStatus: Int32? { output.status.withLock { $0 } }
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}
