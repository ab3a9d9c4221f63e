import Services
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The thread of its own that turns the signals that stop a run (SIGINT, SIGTERM, SIGHUP) and
/// the run's deadlines (`--timeout`, the grace period after a stop) into calls.
///
/// Not Dispatch's signal sources and timers: libdispatch retries a worker thread it cannot
/// start for ever (at the user's process limit, `ulimit -u`, or near `ulimit -v`), and its
/// sources and timers then never fire: such a run ignored SIGTERM and could only be killed.
/// This thread is started before the script runs, so a run that has it can always be stopped,
/// and one that cannot start it does not run (``start()`` throws what ran out).
///
/// A signal reaches the thread through a pipe: the handler only writes the signal's number
/// (async-signal-safe), the thread reads it and calls the handler given at the start.
///
/// ```swift
/// let thread = try StopThread.start()
/// thread.take([SIGINT, SIGTERM]) { number in stop(number) }
/// thread.after(2) { exitNow() }
/// defer { thread.stop() }
/// ```
final class StopThread: Sendable {
    /// A byte on the pipe that is no signal: wake up to look at the deadlines.
    private static let wake: UInt8 = 0
    /// A byte on the pipe that ends the thread.
    private static let quit: UInt8 = 255
    /// The pipe's write end for the signal handler (-1: none). One run at a time takes signals.
    private static let handlerDescriptor = Atomic<Int32>(-1)

    /// The signals taken (``take(_:handler:)``) and what they call.
    private let taken = Mutex<(signals: [Int32], handler: (@Sendable (Int32) -> Void)?)>(([], nil))
    private let reading: Int32
    private let writing: Int32
    /// The deadlines to run, at monotonic nanoseconds.
    private let deadlines = Mutex<[(at: UInt64, action: @Sendable () -> Void)]>([])
    private let thread = Mutex<pthread_t?>(nil)

    private init(reading: Int32, writing: Int32) {
        self.reading = reading
        self.writing = writing
    }

    /// Starts the thread.
    ///
    /// - Throws: the message of ``ThreadShortage`` when the thread cannot be started, or why
    ///   the pipe could not be made.
    static func start() throws(StopThreadError) -> StopThread {
        // Non-blocking: a full pipe drops a signal's byte rather than blocking the handler; the
        // thread reads them as they come, so only a flood is lost, and one is enough to stop.
        guard let ends = SystemCalls.pipe() else {
            throw StopThreadError(message: "cannot make the pipe that takes the run's signals: \(String(cString: strerror(errno)))")
        }
        let stopThread = StopThread(reading: ends.read, writing: ends.write)
        var thread = pthread_t()
        // The thread holds the object until it returns (see ``stop()``).
        let context = Unmanaged.passRetained(stopThread).toOpaque()
        let result = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<StopThread>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<StopThread>.fromOpaque(context).release()
            close(ends.read)
            close(ends.write)
            throw StopThreadError(message: ThreadShortage.message(result, starting: "the thread that takes the run's signals"))
        }
        stopThread.thread.withLock { $0 = thread }
        return stopThread
    }

    /// Takes `signals` from here on: each one that comes calls `handler` with its number, on
    /// the thread.
    func take(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        taken.withLock { $0 = (signals, handler) }
        Self.handlerDescriptor.store(writing, ordering: .relaxed)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            let saved = errno
            var byte = UInt8(truncatingIfNeeded: number)
            let descriptor = StopThread.handlerDescriptor.load(ordering: .relaxed)
            if descriptor >= 0 { _ = write(descriptor, &byte, 1) }
            errno = saved
        }
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        for number in signals { sigaction(number, &action, nil) }
    }

    /// Runs `action` on the thread `seconds` from now.
    func after(_ seconds: Double, _ action: @escaping @Sendable () -> Void) {
        let at = Self.now() &+ UInt64(max(0, min(seconds, 9e9)) * 1e9)
        deadlines.withLock { $0.append((at: at, action: action)) }
        send(Self.wake)
    }

    /// Stops taking signals (they are ignored from here on, as while the process ends) and ends
    /// the thread. Not from the thread itself.
    func stop() {
        var ignore = sigaction()
        ignore.__sigaction_handler.sa_handler = SIG_IGN
        for number in taken.withLock({ $0.signals }) { sigaction(number, &ignore, nil) }
        _ = Self.handlerDescriptor.compareExchange(expected: writing, desired: -1, ordering: .relaxed)
        send(Self.quit)
        if let thread = thread.withLock({ $0 }) { pthread_join(thread, nil) }
        close(writing)
        close(reading)
        // Nothing calls them any more. A run's handler and deadlines call its stop, which holds
        // this thread and reaches the host: kept, they held both for the rest of the process.
        taken.withLock { $0.handler = nil }
        deadlines.withLock { $0.removeAll() }
    }

    private func send(_ byte: UInt8) {
        var byte = byte
        while write(writing, &byte, 1) < 0 && errno == EINTR {}
    }

    private func run() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while true {
            let next = deadlines.withLock { $0.map(\.at).min() }
            let wait = next.map { Int32(clamping: ($0 > Self.now() ? $0 - Self.now() : 0) / 1_000_000 + 1) } ?? -1
            var ready = pollfd(fd: reading, events: Int16(POLLIN), revents: 0)
            if poll(&ready, 1, wait) > 0 {
                let count = read(reading, &bytes, bytes.count)
                // A read that found nothing (EAGAIN, EINTR) is -1: no byte then.
                for byte in bytes.prefix(max(0, count)) {
                    if byte == Self.quit { return }
                    if byte != Self.wake, let handler = taken.withLock({ $0.handler }) { handler(Int32(byte)) }
                }
            }
            let now = Self.now()
            let due = deadlines.withLock { pending in
                let due = pending.filter { $0.at <= now }
                pending.removeAll { $0.at <= now }
                return due.map(\.action)
            }
            for action in due { action() }
        }
    }

    /// Monotonic nanoseconds: a stop's grace and `--timeout` are real time, as Dispatch's were.
    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

/// Why the run's stop thread could not start.
struct StopThreadError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
