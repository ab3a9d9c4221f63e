import Glibc
import Model

/// One running program as the reactor sees it: its pipes, what it wrote, what is left to write
/// to its stdin, and how it ended. It is made before the program starts (the start runs on a
/// launch thread, ``ProgramLaunch``): its pipes are read and written from ``start()`` on, its
/// exit watched from ``launched(_:)``, and a start that failed is its end. Confined to the
/// ``DescriptorReactor`` thread: every method runs there (others reach it through
/// ``DescriptorReactor/submit(_:)``).
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
        /// The program ended (with its output, for `run`), or never started.
        var exited: (Result<ProcessOutcome, ServiceError>) -> Void
        /// True while the lines already handed over are too many for the loop (`spawn`): the
        /// pipes are not read (the program waits on its full pipe) until ``resumeOutput()``.
        var holdsBack: (() -> Bool)? = nil
        /// Arranges a later ``resumeOutput()`` once output was held back.
        var retryLater: (() -> Void)? = nil
    }

    /// Where the program is in its life.
    enum Phase {
        case running
        /// `timeout` passed: SIGTERM was sent; SIGKILL follows after the grace.
        case terminating
        /// The program exited after SIGTERM and was reported, but what it started in its group
        /// still has the rest of the grace to clean up: the leader stays a zombie (so its pid
        /// names only this group) until ``killAfterGrace()`` kills the group and reaps it.
        case lingering
        /// The grace passed with the program still running: SIGKILL was sent, and its exit is
        /// the end of the group.
        case killed
        case ended
    }

    /// Whether the program exists yet.
    private enum Start {
        case pending
        case started(pid: pid_t, exitDescriptor: Int32)
        case failed
    }

    let programName: String
    private let launch: ProgramLaunch
    private let reactor: DescriptorReactor
    private var launchState = Start.pending
    /// Set by ``start()``: the exit is watched once both this and the start have happened.
    private var watching = false
    private var input: Int32
    private var pendingInput: [UInt8] = []
    private var closeInputWhenWritten = false
    private var streams: [OutputPipe]
    /// The lines read since the last hand-over (``Callbacks/lines``), of one stream.
    private var readLines: [OutputLine] = []
    /// The most lines handed to the loop in one report.
    static let batchLines = 256
    private var callbacks: Callbacks
    private(set) var phase = Phase.running
    private var timedOut = false
    /// Set while the pipes are not read (``Callbacks/holdsBack``).
    private var heldBack = false

    init(_ launch: ProgramLaunch, splitsLines: Bool, reactor: DescriptorReactor, callbacks: Callbacks) {
        let prepared = launch.prepared
        let spec = prepared.spec
        programName = spec.programName
        self.launch = launch
        self.reactor = reactor
        input = prepared.input
        streams = [OutputPipe(name: "stdout", descriptor: prepared.output, limit: spec.maxBytes, splitsLines: splitsLines),
                   OutputPipe(name: "stderr", descriptor: prepared.errors, limit: spec.maxBytes, splitsLines: splitsLines)]
        self.callbacks = callbacks
        if let stdin = spec.stdin {
            pendingInput = stdin
            closeInputWhenWritten = true
        }
    }

    /// Starts watching the pipes, and the exit once the program has started.
    func start() {
        guard !watching, phase != .ended else { return }
        watching = true
        for index in streams.indices where streams[index].isOpen {
            reactor.watch(streams[index].descriptor, events: Int16(POLLIN)) { _ in self.readAvailable(index) }
        }
        watchExit()
        if input >= 0 {
            reactor.watch(input, events: 0) { _ in self.writePending() }
            writePending()
        }
    }

    /// How the start went (``ProgramLaunch``): the exit is watched from now, or the failed start
    /// is reported as this program's end, its pipes closed.
    func launched(_ result: Result<ProcessLauncher.Started, ServiceError>) {
        switch result {
        case .success(let started):
            launchState = .started(pid: started.pid, exitDescriptor: started.exitDescriptor)
            watchExit()
        case .failure(let error):
            launchState = .failed
            for index in streams.indices { finishStream(index) }
            closeInputNow()
            phase = .ended
            callbacks.exited(.failure(error))
            callbacks.lines = nil
        }
    }

    private func watchExit() {
        guard watching, case .started(_, let exitDescriptor) = launchState else { return }
        reactor.watch(exitDescriptor, events: Int16(POLLIN)) { _ in self.exited() }
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

    /// Reads the pipes again after ``Callbacks/holdsBack`` stopped them, or arranges to retry.
    func resumeOutput() {
        guard heldBack, phase != .ended else { return }
        if callbacks.holdsBack?() == true {
            callbacks.retryLater?()
            return
        }
        heldBack = false
        for index in streams.indices where streams[index].isOpen {
            reactor.setEvents(streams[index].descriptor, Int16(POLLIN))
        }
    }

    private func readAvailable(_ index: Int, draining: Bool = false) {
        guard streams[index].isOpen else { return }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let collects = callbacks.lines != nil
        var ended = false
        // Bounded: at most 16 reads (1 MiB) per wake-up, so one busy program does not starve
        // the others; poll says again that the rest is there.
        reading: for _ in 0..<16 {
            if !draining, callbacks.holdsBack?() == true {
                // Back-pressure: the program blocks on its full pipe until the loop catches up.
                // What this wake-up read so far goes first.
                handOverLines(of: index)
                for other in streams.indices where streams[other].isOpen { reactor.setEvents(streams[other].descriptor, 0) }
                if !heldBack {
                    heldBack = true
                    callbacks.retryLater?()
                }
                return
            }
            let count = buffer.withUnsafeMutableBytes { read(streams[index].descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                let name = streams[index].name
                buffer.withUnsafeBytes { bytes in
                    streams[index].take(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) { line, cut in
                        guard collects else { return }
                        readLines.append((Array(line), cut))
                        // A report carries at most batchLines lines, so the back-pressure's
                        // count of reports bounds the lines waiting for the loop.
                        if readLines.count >= Self.batchLines {
                            let lines = readLines
                            readLines = []
                            callbacks.lines?(name, lines)
                        }
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
        flushLine(of: index)
        streams[index].close()
        reactor.unwatch(streams[index].descriptor)
        close(streams[index].descriptor)
    }

    /// Hands over the line stream `index` holds without its newline, as its last line.
    private func flushLine(of index: Int) {
        let collects = callbacks.lines != nil
        streams[index].flushLine { line, cut in
            if collects { readLines.append((Array(line), cut)) }
        }
        handOverLines(of: index)
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
        // Before the start, sent as soon as the program exists.
        launch.signal(SIGTERM)
    }

    func killAfterGrace() {
        switch phase {
        case .terminating:
            phase = .killed
            launch.signal(SIGKILL)
        case .lingering:
            guard case .started(let pid, _) = launchState else { return }
            kill(-pid, SIGKILL)
            for index in streams.indices { finishStream(index) }
            ProcessGroups.remove(pid)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            phase = .ended
        case .running, .killed, .ended:
            break
        }
    }

    /// The exit descriptor is readable: the program has exited. Reads what it left in the pipes,
    /// closes everything, reaps it and reports.
    private func exited() {
        guard phase != .lingering, phase != .ended, case .started(let pid, let exitDescriptor) = launchState else { return }
        let lingers = phase == .terminating
        for index in streams.indices {
            readAvailable(index, draining: true)
            // Lingering, what the group still writes is read (and dropped) until the grace
            // ends: a closed pipe would kill a worker's last message, and it, by SIGPIPE.
            if !lingers { finishStream(index) }
        }
        closeInputNow()
        reactor.unwatch(exitDescriptor)
        close(exitDescriptor)
        if lingers {
            // Its last line without a newline is reported with it: the workers still hold the
            // pipe, so no end of file will come to finish it before the report.
            for index in streams.indices where streams[index].isOpen { flushLine(of: index) }
            // Ended by SIGTERM (its timeout, its task's end, a kill): the programs it started
            // get the rest of the grace too (a shell, make or git exits at once, its workers
            // clean up), so the group is killed by killAfterGrace, not now.
            phase = .lingering
            report(Self.statusLeavingZombie(pid))
            return
        }
        // What it left running in its group ends with it. Before the reap, the leader is a
        // zombie whose pid still names the group, so the signal cannot reach anyone else.
        kill(-pid, SIGKILL)
        // Out of the registry before the reap: after it, the pid may name another process.
        ProcessGroups.remove(pid)
        var status: Int32 = 0
        var reaped: pid_t
        repeat { reaped = waitpid(pid, &status, 0) } while reaped == -1 && errno == EINTR
        phase = .ended
        report(reaped == pid ? ProcessOutcome(waitStatus: status) : ProcessOutcome(status: nil, signal: "unknown"))
    }

    /// How the exited leader `pid` ended, read without reaping it (`waitid` with `WNOWAIT`).
    private static func statusLeavingZombie(_ pid: pid_t) -> ProcessOutcome {
        var info = siginfo_t()
        var result: Int32
        repeat { result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) } while result == -1 && errno == EINTR
        guard result == 0 else { return ProcessOutcome(status: nil, signal: "unknown") }
        let value = info._sifields._sigchld.si_status
        // CLD_EXITED is 1; CLD_KILLED 2 and CLD_DUMPED 3 carry the signal.
        return info.si_code == 1 ? ProcessOutcome(status: Int(value)) : ProcessOutcome(status: nil, signal: ProcessOutcome.signalName(value))
    }

    /// Hands how it ended, with its output, to ``Callbacks/exited``, once.
    private func report(_ ending: ProcessOutcome) {
        var outcome = ending
        outcome.timedOut = timedOut
        if !streams[0].splitsLines {
            outcome.stdout = streams[0].kept
            outcome.stderr = streams[1].kept
        }
        outcome.truncated = streams.contains { $0.truncated }
        callbacks.exited(.success(outcome))
        callbacks.lines = nil
    }
}
