import Glibc
import Model
import NIOCore
import NIOPosix

/// Fixes from NMEA 0183 sentences (``NMEAParser``): a regular file is replayed at its recorded
/// rate times `speedup`, read as the replay goes (``NMEAFileSource``); anything else (a serial device such as `/dev/ttyUSB0`, a FIFO) is read
/// as a live stream. Set a serial port's speed beforehand (`stty -F /dev/ttyUSB0 4800`).
///
/// A device that cannot be opened, or that closes, is reported as `unavailable` and reopened
/// with backoff.
struct NMEAProvider: LocationProvider {
    let name = "nmea"
    let path: String
    let speedup: Double

    var source: String { path }

    func run(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async {
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG {
            await replayFile(clock: clock, report)
        } else {
            await stream(clock: clock, report)
        }
    }

    /// The whole file's fixes, with the parser's counts.
    static func read(path: String, today: Double) throws(ServiceError) -> (fixes: [LocationFix], parser: NMEAParser) {
        let bytes = try FileBytes.read(path)
        var parser = NMEAParser(today: today)
        var fixes: [LocationFix] = []
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            fixes += parser.feed(String(decoding: line, as: UTF8.self))
        }
        fixes += parser.finish()
        return (fixes, parser)
    }

    private func replayFile(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async {
        let source: NMEAFileSource
        do throws(ServiceError) {
            source = try NMEAFileSource(path: path, today: clock.wallTime)
        } catch {
            report(.failed(error))
            report(.ended)
            return
        }
        await Replay(source: source, speedup: speedup).run(clock: clock, report)
    }

    private func stream(clock: any ServiceClock, _ report: @escaping @Sendable (ProviderEvent) -> Void) async {
        var backoff = Backoff()
        var failing = false
        while !Task.isCancelled {
            let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            if descriptor >= 0, let reason = Self.unwatchableReason(descriptor) {
                // Such a file stays what it is: retrying would only repeat the failure.
                close(descriptor)
                report(.failed(ServiceError(.unavailable, "cannot read the NMEA device \(path): \(reason); give a serial device, a FIFO or an NMEA file")))
                report(.ended)
                return
            } else if descriptor >= 0 {
                do {
                    try await readStream(descriptor, today: clock.wallTime) { fixes in
                        failing = false
                        backoff.reset()
                        report(.fixes(fixes))
                    }
                } catch {}
                guard !Task.isCancelled else { return }
                if !failing { report(.failed(ServiceError(.unavailable, "the NMEA device \(path) closed"))) }
            } else if !failing {
                report(.failed(ServiceError(.unavailable, "cannot open the NMEA device \(path): \(String(cString: strerror(errno)))")))
            }
            failing = true
            guard await backoff.wait(on: clock) else { return }
        }
    }

    /// Why NIO cannot watch `descriptor` (`/dev/null` and other devices epoll refuses), or nil when
    /// it can. NIO traps on a descriptor it failed to register (its deregistration cannot fail), so
    /// this asks epoll first, as NIO will.
    static func unwatchableReason(_ descriptor: CInt) -> String? {
        guard let epoll = Epoll.functions else { return nil }
        let poller = epoll.create(CInt(O_CLOEXEC))
        guard poller >= 0 else { return "cannot create an epoll instance: \(String(cString: strerror(errno)))" }
        defer { close(poller) }
        // struct epoll_event: the events word first (EPOLLIN), then the data, which is unused;
        // 16 zeroed bytes cover its packed 12-byte (x86-64) and 16-byte (arm64) layouts.
        var event = [UInt32](repeating: 0, count: 4)
        event[0] = 1
        let added = event.withUnsafeMutableBytes { epoll.control(poller, 1, descriptor, $0.baseAddress) }
        guard added == 0 else {
            return errno == EPERM ? "it cannot be watched for input (epoll refuses it)" : String(cString: strerror(errno))
        }
        return nil
    }

    /// Reads lines from `descriptor` (NIO takes ownership and closes it) until it closes or the
    /// task is cancelled.
    private func readStream(_ descriptor: CInt, today: Double, _ deliver: ([LocationFix]) -> Void) async throws {
        let channel = try await NIOPipeBootstrap(group: EventLoops.shared.group())
            .takingOwnershipOfDescriptor(input: descriptor) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        var parser = NMEAParser(today: today)
        try await withTaskCancellationHandler {
            try await channel.executeThenClose { inbound, _ in
                var lines = LineSplitter()
                for try await buffer in inbound {
                    var fixes: [LocationFix] = []
                    for line in lines.append(buffer) { fixes += parser.feed(line) }
                    if !fixes.isEmpty { deliver(fixes) }
                }
            }
        } onCancel: {
            channel.channel.close(promise: nil)
        }
    }
}

/// epoll's C functions, looked up at run time: the Glibc module does not import <sys/epoll.h>.
private enum Epoll {
    typealias Create = @convention(c) (CInt) -> CInt
    typealias Control = @convention(c) (CInt, CInt, CInt, UnsafeMutableRawPointer?) -> CInt

    /// `epoll_create1` and `epoll_ctl`, or nil where the C library has none.
    static var functions: (create: Create, control: Control)? {
        guard let create = dlsym(nil, "epoll_create1"), let control = dlsym(nil, "epoll_ctl") else { return nil }
        return (unsafeBitCast(create, to: Create.self), unsafeBitCast(control, to: Control.self))
    }
}
