import CrescentKit
import Dispatch
import Foundation
import Model
import NIOCore
import NIOPosix

/// The row of remote control: the round trip of `eval` of `1` over the host's socket,
/// from a client in the bench, against a bare NIO Unix-socket server echoing the same JSON line
/// (the floor any socket server on this machine pays), measured in the same run.
enum RemoteRows {
    static let roundTrips = 2000

    /// Microseconds per round trip, median of 7 paired rounds.
    static func eval() throws(BenchFailure) -> BenchRow {
        let row = "remote-eval"
        let folder = try BenchFolder(row: row)
        setenv("XDG_RUNTIME_DIR", folder.path, 1)
        let host = try startHost(row: row)
        defer { stopHost(host) }
        let echo = try EchoServer(path: folder.path + "/echo.sock", row: row)
        defer { echo.stop() }
        let remote = try connect(RemoteFolder.standard().socketPath(for: "bench"), row: row)
        let bare = try connect(echo.path, row: row)
        let line = JSONRPCMessage.request(id: 1, method: "eval", params: ["code": "1"]).line + "\n"

        func rounds(_ count: Int) throws(BenchFailure) -> PairedSamples {
            try PairedSamples.collect(rounds: count, warmups: 1,
                                      subject: { () throws(BenchFailure) in try roundTrip(remote, line, row: row) },
                                      baseline: { () throws(BenchFailure) in try roundTrip(bare, line, row: row) })
        }
        // Unpinned as well, for the note: where the scheduler puts the threads moves both sides.
        let unpinned = try rounds(3)
        let samples = try ThreadPinning.onOneProcessor { () throws(BenchFailure) in try rounds(7) }
        let unpinnedSubject = Statistics.median(unpinned.subject), unpinnedBaseline = Statistics.median(unpinned.baseline)
        return BenchRow(name: row, value: Statistics.median(samples.subject), baseline: Statistics.median(samples.baseline),
                        unit: "µs", goal: .ratioAtMost(2.0),
                        note: "\(roundTrips) round trips of eval { code = \"1\" } over crescent's Unix socket (JSON-RPC line in, "
                            + "the chunk run as a task on the host loop, { text, value } line out), median of 7 rounds; "
                            + "baseline: a bare NIO Unix-socket server echoing the same line, one client each, same run; "
                            + "all threads on one processor for both (unpinned, the scheduler's placement decides: here "
                            + "\(NumberFormat.fixed(unpinnedSubject, digits: 1)) µs vs \(NumberFormat.fixed(unpinnedBaseline, digits: 1)) µs, "
                            + "ratio \(NumberFormat.fixed(unpinnedSubject / unpinnedBaseline, digits: 2)), median of 3)")
    }

    /// Microseconds per round trip of `line` on `socket`, one at a time.
    private static func roundTrip(_ socket: UnixSocket, _ line: String, row: String) throws(BenchFailure) -> Double {
        let nanoseconds = try MonotonicClock.time { () throws(BenchFailure) in
            for _ in 0..<roundTrips {
                do throws(RemoteError) {
                    try socket.write(line)
                    var got = try socket.read()
                    while got.last != UInt8(ascii: "\n") {
                        let more = try socket.read()
                        guard !more.isEmpty else { throw RemoteError("the server closed the connection") }
                        got += more
                    }
                } catch {
                    throw BenchFailure(row: row, reason: error.description)
                }
            }
        }
        return nanoseconds / Double(roundTrips) / 1000
    }

    private static func connect(_ path: String, row: String) throws(BenchFailure) -> UnixSocket {
        do throws(RemoteError) { return try UnixSocket.connect(path: path) } catch {
            throw BenchFailure(row: row, reason: error.description)
        }
    }

    /// A host listening as `bench` on its own thread, as `crescent --listen` runs; it stays up
    /// (a controller is pushed) until the bench asks it to exit.
    private static func startHost(row: String) throws(BenchFailure) -> String {
        let source = "local Idle = controller('Idle')\nfunction Idle:loadView() return view.text('idle') end\napp.push(Idle)\n"
        var settings = HostOptions()
        settings.listen = "bench"
        settings.memoryLimitMiB = 0
        let console = Console(colors: false) { _, _ in }
        let options = settings
        DispatchQueue(label: "crescent-bench.remote-host").async {
            _ = ScriptRunner.run(.code(source), bytes: Array(source.utf8), options: options, plugins: [.standard], console: console)
        }
        let path = RemoteFolder.standard().socketPath(for: "bench")
        for _ in 0..<3000 {
            if case .live = UnixSocket.probe(path) { return path }
            usleep(10_000)
        }
        throw BenchFailure(row: row, reason: "the host never listened at \(path)")
    }

    private static func stopHost(_ path: String) {
        _ = try? RemoteClient(path: path).call("eval", ["code": "app.exit(0)"])
    }
}

/// The baseline: NIO's Unix-socket server with one handler writing back each line it reads.
private final class EchoServer {
    let path: String
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel: any Channel

    init(path: String, row: String) throws(BenchFailure) {
        self.path = path
        do {
            channel = try ServerBootstrap(group: group)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(EchoHandler()) }
                }
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw BenchFailure(row: row, reason: "cannot start the echo server: \(error)")
        }
    }

    func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

/// Writes back whole lines, as the host answers whole lines.
private final class EchoHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private var pending = ByteBuffer()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        guard let newline = pending.readableBytesView.lastIndex(of: UInt8(ascii: "\n")),
              let lines = pending.readSlice(length: newline - pending.readerIndex + 1) else { return }
        pending.discardReadBytes()
        context.writeAndFlush(wrapOutboundOut(lines), promise: nil)
    }
}
