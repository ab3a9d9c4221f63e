import NIOCore
import Synchronization
import Model

/// One client's connection: its channel, on the host loop, and what the server's threads share
/// about it (the interrupt watch reads its flags).
///
/// Everything the host sends goes through the outbox here and never waits: the host's pace must
/// not depend on a client's. The outbox is written to the socket only while the channel is
/// writable, so a client that stops reading holds back at most NIO's high-water mark of bytes and
/// the outbox itself, which is bounded two ways:
///
/// - Observations and renders are *latest* items: a new value for the same subscription replaces
///   the one still waiting, so a slow reader sees fewer, newer values.
/// - Responses and events are never dropped: past ``maxQueued`` of them, or past
///   ``maxQueuedBytes`` of lines, the client is disconnected with a reason, and the host forgets
///   it. The output of the client's own eval does not count towards ``maxQueued``: it is made
///   while the chunk holds the loop, when the client cannot be read to, however fast it reads.
final class RemoteConnection: Sendable {
    /// How many responses and events may wait for a slow reader before it is disconnected.
    static let maxQueued = 1000
    /// How many bytes of lines may wait for a slow reader before it is disconnected (a few large
    /// answers are as bad as many small ones).
    static let maxQueuedBytes = 64 << 20

    let id: Int
    let channel: any Channel
    /// True while Lua code this client asked for runs (its `eval`'s chunk, not while it waits;
    /// `observe`'s expression): an `interrupt` the ``InterruptWatch`` finds then stops that code at
    /// once, since the host loop is busy running it, and so does the client's hanging up.
    let codeRunning = Atomic<Bool>(false)
    /// An `interrupt` was seen and the host loop has not handled it yet: an eval that starts
    /// meanwhile (it was queued before the interrupt) is stopped as it starts.
    let interruptRequested = Atomic<Bool>(false)
    private let outbox = Mutex(Outbox())

    private struct Outbox {
        enum Item {
            /// A line that must arrive; `counted` when it counts towards ``maxQueued``.
            case line(String, counted: Bool)
            case latest(String)
        }

        var items: [Item] = []
        var head = 0
        var latest: [String: String] = [:]
        /// The lines waiting that count towards ``maxQueued``.
        var queued = 0
        /// The bytes of all the lines waiting, newlines included.
        var queuedBytes = 0
        var flushScheduled = false
        /// The host loop is handling lines this connection read: what they queue is written
        /// when the read completes (``readCompleted()``), not by a task of its own.
        var reading = false
        /// What the read's lines produced waits for the read's end: items queued (their flush
        /// deferred), or lines handed to the channel and not flushed.
        var flushAtReadEnd = false
        var closed = false
        /// Values replaced before the client read them (a slow reader).
        var replaced = 0
    }

    /// Told when the outbox overflows, before the connection closes, with the connection and what
    /// overflowed: the server stops what the client runs and forgets it at once, without waiting
    /// for the close (which waits for the `disconnect` line to be written).
    let onOverflow: (@Sendable (RemoteConnection, String) -> Void)?

    /// How long the `disconnect` line of an overflow may wait for the client to read before the
    /// connection closes without it.
    static let disconnectGrace = TimeAmount.seconds(10)

    init(id: Int, channel: any Channel, onOverflow: (@Sendable (RemoteConnection, String) -> Void)? = nil) {
        self.id = id
        self.channel = channel
        self.onOverflow = onOverflow
    }

    /// Queues a line that must arrive (a response, an event). Past the bound the client is
    /// disconnected with a reason and false is returned. `ownOutput` is the output of the
    /// client's own eval, which counts by its bytes only.
    @discardableResult
    func send(_ message: JSONRPCMessage, ownOutput: Bool = false) -> Bool {
        let line = message.line
        let size = line.utf8.count + 1
        let onLoop = channel.eventLoop.inEventLoop
        let outcome = outbox.withLock { box -> SendOutcome in
            guard !box.closed else { return .refused }
            // The answer to a line this connection read, with nothing waiting before it: handed
            // to the channel at once (no queueing), and flushed when the read completes.
            if onLoop && box.reading && box.head == box.items.count && channel.isWritable {
                box.flushAtReadEnd = true
                return .direct
            }
            guard ownOutput || box.queued < Self.maxQueued else {
                box.closed = true
                return .overflow("more than \(Self.maxQueued) responses and events waited")
            }
            // One line alone may be larger than the bound: it waits only behind nothing.
            guard box.queuedBytes == 0 || box.queuedBytes + size <= Self.maxQueuedBytes else {
                box.closed = true
                return .overflow("more than \(Self.maxQueuedBytes >> 20) MiB of responses, events and output waited")
            }
            box.items.append(.line(line, counted: !ownOutput))
            if !ownOutput { box.queued += 1 }
            box.queuedBytes += size
            return .queued(schedule: Self.takeSchedule(&box))
        }
        switch outcome {
        case .direct:
            write(line)
        case .queued(let schedule):
            if schedule { scheduleFlush() }
        case .overflow(let what):
            onOverflow?(self, what)
            close(reason: "the client did not read: \(what)")
            return false
        case .refused:
            return false
        }
        return true
    }

    private enum SendOutcome {
        case direct
        case queued(schedule: Bool)
        case overflow(String)
        case refused
    }

    /// Queues a value where only the newest matters (an observation, a render): a value still
    /// waiting under the same `key` is replaced.
    func sendLatest(_ message: JSONRPCMessage, key: String) {
        let line = message.line
        let schedule = outbox.withLock { box -> Bool in
            guard !box.closed else { return false }
            if box.latest.updateValue(line, forKey: key) != nil {
                box.replaced += 1
                return false
            }
            box.items.append(.latest(key))
            return Self.takeSchedule(&box)
        }
        if schedule { scheduleFlush() }
    }

    /// True once the connection is closing: nothing more is sent, and what it reads is dropped.
    var isClosed: Bool { outbox.withLock { $0.closed } }

    /// How many items wait (the tests and the bench watch it stay bounded).
    var waiting: Int { outbox.withLock { $0.items.count - $0.head } }

    private static func takeSchedule(_ box: inout Outbox) -> Bool {
        guard !box.flushScheduled else { return false }
        box.flushScheduled = true
        if box.reading {
            box.flushAtReadEnd = true
            return false
        }
        return true
    }

    /// The channel delivers a line read from the client (on the host loop).
    func reading() {
        outbox.withLock { $0.reading = true }
    }

    /// The channel's read is over: what the lines' handling queued is written now, one write
    /// for all of them, without a loop task to schedule (an `eval` answers in the same turn).
    func readCompleted() {
        let flushNow = outbox.withLock { box -> Bool in
            box.reading = false
            return box.flushAtReadEnd
        }
        if flushNow { flush() }
    }

    private func scheduleFlush() {
        channel.eventLoop.execute { self.flush() }
    }

    /// Writes what waits while the channel takes it; on the channel's loop. Called again when the
    /// channel becomes writable.
    func flush() {
        var wrote = false
        while channel.isWritable {
            let next = outbox.withLock { box -> String? in
                guard box.head < box.items.count else {
                    box.items.removeAll(keepingCapacity: box.items.count < 1024)
                    box.head = 0
                    box.flushScheduled = false
                    return nil
                }
                let item = box.items[box.head]
                box.head += 1
                switch item {
                case .line(let line, let counted):
                    if counted { box.queued -= 1 }
                    box.queuedBytes -= line.utf8.count + 1
                    return line
                case .latest(let key):
                    return box.latest.removeValue(forKey: key) ?? ""
                }
            }
            guard let next else { break }
            if next.isEmpty { continue }
            write(next)
            wrote = true
        }
        let unflushed = outbox.withLock { box -> Bool in
            if !channel.isWritable { box.flushScheduled = false }
            defer { box.flushAtReadEnd = false }
            return box.flushAtReadEnd
        }
        if wrote || unflushed { channel.flush() }
    }

    /// Hands `line` and its newline to the channel, unflushed; on the channel's loop.
    private func write(_ line: String) {
        var buffer = channel.allocator.buffer(capacity: line.utf8.count + 1)
        buffer.writeString(line)
        buffer.writeInteger(UInt8(ascii: "\n"))
        channel.write(buffer, promise: nil)
    }

    /// Tells the client why (a `disconnect` notification) and closes.
    ///
    /// What still waits in the outbox is dropped, so the notification comes right after the lines
    /// already handed to the channel (whole lines: none is cut). A client that does not read has
    /// filled its socket, so the line is written when it reads again: the connection closes once
    /// the line is written, or after ``disconnectGrace`` without it (closing at once would drop it).
    func close(reason: String) {
        let line = JSONRPCMessage.notification(method: "disconnect", params: ["reason": .string(reason)]).line
        outbox.withLock { box in
            box.closed = true
            box.items.removeAll()
            box.head = 0
            box.latest.removeAll()
            box.queued = 0
            box.queuedBytes = 0
        }
        channel.eventLoop.execute {
            let channel = self.channel
            // Nothing more is read from it meanwhile.
            _ = channel.setOption(ChannelOptions.autoRead, value: false)
            var buffer = channel.allocator.buffer(capacity: line.utf8.count + 1)
            buffer.writeString(line)
            buffer.writeInteger(UInt8(ascii: "\n"))
            let written = channel.eventLoop.makePromise(of: Void.self)
            channel.writeAndFlush(buffer, promise: written)
            let giveUp = channel.eventLoop.scheduleTask(in: Self.disconnectGrace) { channel.close(promise: nil) }
            written.futureResult.whenComplete { _ in
                giveUp.cancel()
                channel.close(promise: nil)
            }
        }
    }

    /// Closes without a word (the host is finishing), after writing what waits: the answer to
    /// the request that ended the host (`crescent send --key q`) reaches its client, which can
    /// then tell a key that ended the host from a host that died.
    func close() {
        guard channel.eventLoop.inEventLoop else {
            outbox.withLock { $0.closed = true }
            return channel.close(promise: nil)
        }
        flush()
        channel.flush()
        outbox.withLock { $0.closed = true }
        channel.close(promise: nil)
    }
}
