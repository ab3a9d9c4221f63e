import CrescentKit
import LuaBridge
import Model
import NIOCore
import NIOEmbedded
import Synchronization

/// A host on NIO's EmbeddedEventLoop: virtual time, captured output, the exit status recorded.
final class TestHost {
    let loop = EmbeddedEventLoop()
    let host: Host
    private let output = Output()

    final class Output: Sendable {
        let stdout = Mutex("")
        let stderr = Mutex("")
        let status = Mutex<Int32?>(nil)
    }

    init(failFast: Bool = false, arguments: [String] = [], plugins: [any Plugin] = []) throws {
        var options = HostOptions()
        options.failFast = failFast
        options.arguments = arguments
        let output = self.output
        let console = Console(colors: false) { stream, text in
            switch stream {
            case .output: output.stdout.withLock { $0 += text }
            case .error: output.stderr.withLock { $0 += text }
            }
        }
        host = try Host(loop: loop, options: options, console: console, plugins: plugins) { status in
            output.status.withLock { $0 = status }
        }
    }

    /// Runs `source` as the main chunk of `test.lua`.
    func run(_ source: String) {
        host.runMain(source: Array(source.utf8), chunkName: "@test.lua", scriptPath: nil, argZero: "test.lua")
    }

    /// Moves virtual time forward, running every timer that comes due.
    func advance(seconds: Double) {
        loop.advanceTime(by: .nanoseconds(Int64(seconds * 1e9)))
    }

    var stdout: String { output.stdout.withLock { $0 } }
    var stderr: String { output.stderr.withLock { $0 } }
    var exitStatus: Int32? { output.status.withLock { $0 } }
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}
