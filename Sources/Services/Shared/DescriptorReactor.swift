import Glibc
import Model
import Synchronization

/// The one thread that moves the bytes of the process and files services: it polls the pipes and
/// exit descriptors of every program the process service runs (each a ``ChildProcess``) and the
/// inotify descriptors of the files service's watchers, reads and writes without blocking, and
/// hands what it finds to their handlers. Nothing here runs on the host's loop, so hundreds of
/// programs cost the loop only the events and results they produce.
///
/// Work reaches the thread as jobs (``submit(_:)``), which wake its `poll` through a pipe. The
/// watch table, every ``ChildProcess`` and every watcher's inotify state are touched on this
/// thread only.
final class DescriptorReactor: @unchecked Sendable {
    // @unchecked: `watches` and `readBuffer`'s bytes are read and written only on the reactor's
    // own thread (jobs and handlers run there); `jobs` is behind its mutex; the descriptors never
    // change.
    static let shared = DescriptorReactor()

    /// What to do when a watched descriptor is ready: called on the reactor thread with `revents`.
    typealias Handler = (Int16) -> Void

    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// A buffer handlers may read into, reactor thread only: they run one at a time, and a
    /// buffer allocated (and zeroed) for each wake-up cost more than the read. Never freed: the
    /// reactor lives as long as the process.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private var watches: [Int32: (events: Int16, handler: Handler)] = [:]
    /// Whether the thread runs (``ensureRunning()``).
    private let started = Mutex(false)
    /// The same, read without the lock on every ``submit(_:)``.
    private let running = Atomic<Bool>(false)

    private init() {
        // Invariant: a process that cannot make one pipe at start cannot run programs either;
        // the wake pipe then reads -1 and jobs never run, so calls wait forever rather than crash
        // — checked by the launch, which fails first without pipes.
        let ends = SystemCalls.pipe() ?? (read: -1, write: -1)
        wakeRead = ends.read
        wakeWrite = ends.write
    }

    /// Starts the reactor's thread unless it runs: every call that hands the reactor work calls
    /// this first, so a process that cannot start a thread (`ulimit -u`, `ulimit -v`) gets the
    /// reason at that call, and a later call tries again. Foundation's `Thread` said nothing when
    /// it could not start, and the call waited for ever.
    ///
    /// - Throws: `io` naming what ran out.
    func ensureRunning() throws(ServiceError) {
        try started.withLock { started throws(ServiceError) in
            guard !started else { return }
            // Allocated, not a local: the type's Swift initializer lives in a module not imported here.
            let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
            pthread_attr_init(attributes)
            defer {
                pthread_attr_destroy(attributes)
                attributes.deallocate()
            }
            pthread_attr_setstacksize(attributes, 1 << 20)
            pthread_attr_setdetachstate(attributes, Int32(PTHREAD_CREATE_DETACHED))
            // The thread holds the (never released) shared reactor for its life.
            let context = Unmanaged.passRetained(self).toOpaque()
            var thread = pthread_t()
            let result = pthread_create(&thread, attributes, { context in
                guard let context else { return nil }
                let reactor = Unmanaged<DescriptorReactor>.fromOpaque(context).takeRetainedValue()
                reactor.run()
                return nil
            }, context)
            guard result == 0 else {
                Unmanaged<DescriptorReactor>.fromOpaque(context).release()
                throw ServiceError(.io, ThreadShortage.message(result, starting: "the thread that reads programs' output and watches files"))
            }
            started = true
            running.store(true, ordering: .releasing)
        }
    }

    /// Runs `job` on the reactor thread, soon. A job handed over before any call started the
    /// thread (a path that reaches the reactor without the services' ``ensureRunning()``, or a
    /// test using the reactor itself) starts it here, or it would wait for ever; when the thread
    /// cannot start, the services' own call has reported why.
    func submit(_ job: @escaping @Sendable () -> Void) {
        if !running.load(ordering: .acquiring) { try? ensureRunning() }
        let wasEmpty = jobs.withLock { queue in
            queue.append(job)
            return queue.count == 1
        }
        guard wasEmpty else { return }
        var byte: UInt8 = 1
        while write(wakeWrite, &byte, 1) == -1 && errno == EINTR {}
    }

    /// Calls `handler` whenever `descriptor` is ready for `events` (POLLIN, POLLOUT), until
    /// ``unwatch(_:)``. Reactor thread only.
    func watch(_ descriptor: Int32, events: Int16, _ handler: @escaping Handler) {
        watches[descriptor] = (events, handler)
    }

    /// Changes what `descriptor` is watched for (POLLOUT only while there is input to write).
    func setEvents(_ descriptor: Int32, _ events: Int16) {
        watches[descriptor]?.events = events
    }

    /// Stops watching `descriptor` (before it is closed). Reactor thread only.
    func unwatch(_ descriptor: Int32) {
        watches[descriptor] = nil
    }

    private func run() {
        var ready: [pollfd] = []
        while true {
            ready.removeAll(keepingCapacity: true)
            ready.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
            for (descriptor, watch) in watches where watch.events != 0 {
                ready.append(pollfd(fd: descriptor, events: watch.events, revents: 0))
            }
            let count = poll(&ready, nfds_t(ready.count), -1)
            if count < 0 { continue }   // EINTR; nothing else can fail with valid descriptors
            if ready[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &drain, drain.count) > 0 {}
            }
            for job in jobs.withLock({ queue in defer { queue.removeAll() }; return queue }) { job() }
            for item in ready.dropFirst() where item.revents != 0 {
                // A handler may have unwatched it (its process ended in an earlier handler).
                watches[item.fd]?.handler(item.revents)
            }
        }
    }
}
