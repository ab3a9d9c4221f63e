import CrescentKit
import LuaBridge
import Model
import NIOCore
import NIOEmbedded
import Synchronization

/// A real host with the bench service, on NIO's EmbeddedEventLoop so a row can run loop turns by
/// hand (`drain()`) and time exactly them. A long timer keeps the run from ending between rounds.
final class BenchHost {
    let loop = EmbeddedEventLoop()
    let service = BenchService()
    let host: Host
    let row: String
    private let errors = Errors()

    final class Errors: Sendable {
        let text = Mutex("")
    }

    /// - Parameter options: the host's options (plugin folders for the plugin rows).
    init(row: String, options: HostOptions = HostOptions()) throws(BenchFailure) {
        self.row = row
        let errors = self.errors
        let console = Console(colors: false) { stream, text in
            if stream == .error { errors.text.withLock { $0 += text } }
        }
        do {
            host = try Host(loop: loop, options: options, console: console,
                            plugins: [BenchPlugin(service: service)]) { _ in }
        } catch {
            throw BenchFailure(row: row, reason: "cannot start a host: \(error)")
        }
    }

    var vm: LuaVM { host.vm }

    /// Runs `source` as the main chunk (with a keep-alive timer), then every queued turn.
    func run(_ source: String) throws(BenchFailure) {
        host.runMain(source: Array(("keepalive = timer.every(3600, function() end)\n" + source).utf8),
                     chunkName: "=\(row)", scriptPath: nil)
        try drain()
    }

    /// Runs every queued loop job, and fails when anything was reported on stderr.
    func drain() throws(BenchFailure) {
        loop.run()
        let reported = errors.text.withLock { $0 }
        guard reported.isEmpty, host.isRunning else {
            throw BenchFailure(row: row, reason: reported.isEmpty ? "the host stopped" : reported)
        }
    }

    /// Calls global function `name` with `argument`, protected.
    func call(_ name: String, _ argument: Int64) throws(BenchFailure) {
        _ = vm.getGlobal(name)
        vm.stack.push(argument)
        do {
            try vm.call(arguments: 1, results: 0)
        } catch {
            throw BenchFailure(row: row, reason: error.message)
        }
    }

    /// Pins global `name`.
    func global(_ name: String) -> LuaRef {
        _ = vm.getGlobal(name)
        return vm.ref()
    }
}
