import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A scan of the plugin folders (``PluginDiscovery/scan(_:hostVersion:)``) on a thread of its
/// own, begun before the host builds its VM and taken when the host installs its services.
///
/// Reading and checking the manifests is file work that nothing before the services' install
/// depends on: with the two shipped plugins installed it is about a tenth of `crescent -e ''`'s
/// instructions, while making the VM and installing the globals take twice that, so with a
/// second core it costs the start nothing. Whoever comes first does the scan: a thread that has
/// not begun by the time the host needs the plugins (a machine whose other core was asleep or
/// busy took up to 0.35 ms to run it) finds the work taken and ends, and the host scans itself,
/// as it did before there was a thread; one that has begun is waited for. A memoised search
/// (``PluginSearch/memo``, cheap after its first scan) and a machine that cannot start a thread
/// scan on the caller's.
final class PluginFolderScan: Sendable {
    private let work: ScanWork
    /// The scanning thread, until it is joined or detached.
    private let thread = Mutex<pthread_t?>(nil)

    /// Begins scanning `search`'s folders.
    init(_ search: PluginSearch, hostVersion: String = CrescentVersion.current) {
        work = ScanWork(search: search, hostVersion: hostVersion)
        guard !search.disabled, search.memo == nil else { return }
        var started = pthread_t()
        let argument = Unmanaged.passRetained(work).toOpaque()
        let status = pthread_create(&started, nil, { argument in
            // `argument` is the retained ScanWork passed to pthread_create just below: never nil.
            guard let argument else { return nil }
            Unmanaged<ScanWork>.fromOpaque(argument).takeRetainedValue().runUnlessTaken()
            return nil
        }, argument)
        if status == 0 {
            thread.withLock { $0 = started }
        } else {
            Unmanaged<ScanWork>.fromOpaque(argument).release()
        }
    }

    /// What the scan found: scanned here if the thread has not begun, else once it has finished.
    func wait() -> [DiscoveredPlugin] {
        let running = thread.withLock { state in defer { state = nil }; return state }
        if let found = work.takeAndRun() {
            if let running { pthread_detach(running) }
            return found
        }
        if let running { pthread_join(running, nil) }
        return work.found.withLock { $0 } ?? []
    }

    deinit {
        // A setup that failed before it waited: the thread ends on its own (it holds its work).
        if let running = thread.withLock({ $0 }) { pthread_detach(running) }
    }
}

/// One scan and who does it: the thread, or the host when it needs the plugins first.
private final class ScanWork: Sendable {
    let search: PluginSearch
    let hostVersion: String
    let found = Mutex<[DiscoveredPlugin]?>(nil)
    /// 0 while nobody has begun, 1 once the thread has, 2 once the host has.
    private let taker = Atomic<UInt8>(0)

    init(search: PluginSearch, hostVersion: String) {
        self.search = search
        self.hostVersion = hostVersion
    }

    /// The thread's side: scans unless the host has taken the work.
    func runUnlessTaken() {
        guard taker.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged else { return }
        let plugins = PluginDiscovery.scan(search, hostVersion: hostVersion)
        found.withLock { $0 = plugins }
    }

    /// The host's side: what it scanned itself, or nil when the thread has begun the work.
    func takeAndRun() -> [DiscoveredPlugin]? {
        guard taker.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing).exchanged else { return nil }
        return PluginDiscovery.scan(search, hostVersion: hostVersion)
    }
}
