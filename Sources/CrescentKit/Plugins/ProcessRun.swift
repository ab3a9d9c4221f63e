import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// One run of a process plugin's program: the process and the channels over its pipes, which
/// the loop takes over once the handshake is done. Lines sent before the channel is ready wait
/// in order. Confined to the host's loop.
final class ProcessRun {
    let process: PluginProcess
    private(set) var channel: (any Channel)?
    var errors: (any Channel)?
    private var outbox: [String] = []
    private(set) var isClosed = false

    init(process: PluginProcess) { self.process = process }

    /// Sends one message line.
    func send(_ line: String) {
        guard !isClosed else { return }
        guard let channel else {
            outbox.append(line)
            return
        }
        var buffer = channel.allocator.buffer(capacity: line.utf8.count + 1)
        buffer.writeString(line)
        buffer.writeInteger(UInt8(ascii: "\n"))
        channel.writeAndFlush(buffer, promise: nil)
    }

    /// The channel over stdin and stdout is ready: the waiting lines go out.
    func attach(_ channel: any Channel) {
        guard !isClosed else {
            channel.close(promise: nil)
            return
        }
        self.channel = channel
        let waiting = outbox
        outbox.removeAll()
        for line in waiting { send(line) }
    }

    /// Writes the waiting lines and `extra` straight to the pipe (at shutdown: the loop may not
    /// turn again before the host exits).
    func flushDirectly(extra: String) {
        guard !isClosed else { return }
        let bytes = Array((outbox + [extra]).map { $0 + "\n" }.joined().utf8)
        outbox.removeAll()
        _ = process.write(bytes)
    }

    /// Closes the pipes (the program sees its stdin end).
    func close() {
        guard !isClosed else { return }
        isClosed = true
        channel?.close(promise: nil)
        errors?.close(promise: nil)
    }
}
