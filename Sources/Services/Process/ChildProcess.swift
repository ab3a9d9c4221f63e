import Glibc
import Model

/// One running program as the reactor sees it: its pipes, what it wrote, what is left to write
/// to its stdin, and how it ended. Confined to the ``DescriptorReactor`` thread: every method runs
/// there (others reach it through ``DescriptorReactor/submit(_:)``).
///
/// It ends when the program has exited: the output already in the pipes is read then, the
/// programs it left running in its group (`sh -c "server &"`) are killed with SIGKILL, the pipes
/// are closed, the program is reaped and ``Callbacks/exited`` runs once. A program that left its
/// group (`setsid`) is outside this, as it is outside every kill of the group.
final class ChildProcess: @unchecked Sendable {
    // @unchecked: only the reactor thread touches it (see the type's doc); it crosses threads
    // inside jobs submitted to that thread.

    /// A line of output without its newline, and whether it was cut at `maxBytes`.
    typealias OutputLine = (bytes: [UInt8], cut: Bool)

    /// Where a program's output and end go; called on the reactor thread.
    struct Callbacks {
        /// The lines of output one wake-up read from one stream, in order (`spawn`): the
        /// stream's name and the lines, handed over at once so they cost the loop one report.
        var lines: ((String, [OutputLine]) -> Void)?
        /// The program ended (with its output, for `run`).
        var exited: (ProcessOutcome) -> Void
    }

    /// Where the program is in its life.
    enum Phase {
        case running
        /// `timeout` passed: SIGTERM was sent; SIGKILL follows after the grace.
        case terminating
        case ended
    }

    let pid: pid_t
    let programName: String
    private let reactor: DescriptorReactor
    private let exitDescriptor: Int32
    private var input: Int32
    private var pendingInput: [UInt8] = []
    private var closeInputWhenWritten = false
    private var streams: [OutputPipe]
    /// The lines read since the last hand-over (``Callbacks/lines``), of one stream.
    private var readLines: [OutputLine] = []
    private var callbacks: Callbacks
    private(set) var phase = Phase.running
    private var timedOut = false

    init(_ launched: ProcessLauncher.Launched, spec: ProcessSpec, splitsLines: Bool, reactor: DescriptorReactor, callbacks: Callbacks) {
        pid = launched.pid
        programName = spec.programName
        self.reactor = reactor
        exitDescriptor = launched.exitDescriptor
        input = launched.input
        streams = [OutputPipe(name: "stdout", descriptor: launched.output, limit: spec.maxBytes, splitsLines: splitsLines),
                   OutputPipe(name: "stderr", descriptor: launched.errors, limit: spec.maxBytes, splitsLines: splitsLines)]
        self.callbacks = callbacks
        if let stdin = spec.stdin {
            pendingInput = stdin
            closeInputWhenWritten = true
        }
    }

    /// Starts watching the pipes and the exit.
    func start() {
        for index in streams.indices {
            reactor.watch(streams[index].descriptor, events: Int16(POLLIN)) { _ in self.readAvailable(index) }
        }
        reactor.watch(exitDescriptor, events: Int16(POLLIN)) { _ in self.exited() }
        if input >= 0 {
            reactor.watch(input, events: 0) { _ in self.writePending() }
            writePending()
        }
    }

    // MARK: Input

    /// Queues `bytes` for its stdin; false when stdin is closed (or never was a pipe).
    func write(_ bytes: [UInt8]) -> Bool {
        guard input >= 0, !closeInputWhenWritten else { return false }
        pendingInput += bytes
        writePending()
        return true
    }

    /// Closes its stdin once what was written has gone.
    func closeInput() {
        guard input >= 0 else { return }
        closeInputWhenWritten = true
        writePending()
    }

    private func writePending() {
        guard input >= 0 else { return }
        while !pendingInput.isEmpty {
            let count = pendingInput.withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) }
            if count > 0 {
                pendingInput.removeFirst(count)
            } else if count < 0 && errno == EINTR {
                continue
            } else if count < 0 && errno == EAGAIN {
                reactor.setEvents(input, Int16(POLLOUT))
                return
            } else {
                // EPIPE: the program closed its stdin (or ended); what is left cannot go.
                pendingInput.removeAll()
                closeInputWhenWritten = true
            }
        }
        reactor.setEvents(input, 0)
        if closeInputWhenWritten { closeInputNow() }
    }

    private func closeInputNow() {
        guard input >= 0 else { return }
        reactor.unwatch(input)
        close(input)
        input = -1
    }

    // MARK: Output

    private func readAvailable(_ index: Int) {
        guard streams[index].isOpen else { return }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let collects = callbacks.lines != nil
        var ended = false
        // Bounded: at most 16 reads (1 MiB) per wake-up, so one busy program does not starve
        // the others; poll says again that the rest is there.
        reading: for _ in 0..<16 {
            let count = buffer.withUnsafeMutableBytes { read(streams[index].descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.withUnsafeBytes { bytes in
                    streams[index].take(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) { line, cut in
                        if collects { readLines.append((Array(line), cut)) }
                    }
                }
            } else if count < 0 && errno == EINTR {
                continue
            } else if count < 0 && errno == EAGAIN {
                break reading
            } else {
                ended = true
                break reading
            }
        }
        if ended {
            finishStream(index)
        } else {
            handOverLines(of: index)
        }
    }

    private func finishStream(_ index: Int) {
        guard streams[index].isOpen else { return }
        let collects = callbacks.lines != nil
        streams[index].finish { line, cut in
            if collects { readLines.append((Array(line), cut)) }
        }
        handOverLines(of: index)
        reactor.unwatch(streams[index].descriptor)
        close(streams[index].descriptor)
    }

    /// Hands the lines read from stream `index` over in one call, if there are any.
    private func handOverLines(of index: Int) {
        guard !readLines.isEmpty else { return }
        let lines = readLines
        readLines = []
        callbacks.lines?(streams[index].name, lines)
    }

    // MARK: Ending

    /// `timeout` passed: SIGTERM to the group now, SIGKILL when `grace` (a job the service
    /// schedules on its clock) calls ``killAfterGrace()``.
    func timeOut() {
        guard phase == .running else { return }
        timedOut = true
        terminate()
    }

    /// Ends it gently (its timeout, or the end of the task that spawned it): SIGTERM to the
    /// group now, SIGKILL when ``killAfterGrace()`` comes.
    func terminate() {
        guard phase == .running else { return }
        phase = .terminating
        kill(-pid, SIGTERM)
    }

    func killAfterGrace() {
        guard phase == .terminating else { return }
        kill(-pid, SIGKILL)
    }

    /// The exit descriptor is readable: the program has exited. Reads what it left in the pipes,
    /// closes everything, reaps it and reports.
    private func exited() {
        guard phase != .ended else { return }
        for index in streams.indices {
            readAvailable(index)
            finishStream(index)
        }
        closeInputNow()
        reactor.unwatch(exitDescriptor)
        close(exitDescriptor)
        // What it left running in its group ends with it. Before the reap, the leader is a
        // zombie whose pid still names the group, so the signal cannot reach anyone else.
        kill(-pid, SIGKILL)
        // Out of the registry before the reap: after it, the pid may name another process.
        ProcessGroups.remove(pid)
        var status: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(pid, &status, 0) } while reaped == -1 && errno == EINTR
        phase = .ended
        var outcome = reaped == pid ? ProcessOutcome(waitStatus: status) : ProcessOutcome(status: nil, signal: "unknown")
        outcome.timedOut = timedOut
        if !streams[0].splitsLines {
            outcome.stdout = streams[0].kept
            outcome.stderr = streams[1].kept
        }
        outcome.truncated = streams.contains { $0.truncated }
        callbacks.exited(outcome)
        callbacks.lines = nil
    }
}
