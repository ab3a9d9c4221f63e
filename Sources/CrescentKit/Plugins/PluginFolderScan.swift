import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A scan of the plugin folders (``PluginDiscovery/scan(_:hostVersion:)``) on a thread of its
/// own, begun before the host builds its VM and waited for when the host installs its services.
///
/// Reading and checking the manifests is file work that nothing before the services' install
/// depends on, so on a machine with a second core it costs a run's start-up nothing: with the two
/// shipped plugins installed it is about a tenth of `crescent -e ''`'s instructions, while making
/// the VM and installing the globals take twice that. A memoised search (``PluginSearch/memo``,
/// cheap after its first scan) and a machine that cannot start a thread scan on the caller's.
final class PluginFolderScan: Sendable {
    private let found = ScanResult()
    /// The scanning thread, until it is joined.
    private let thread = Mutex<pthread_t?>(nil)

    /// Begins scanning `search`'s folders.
    init(_ search: PluginSearch, hostVersion: String = CrescentVersion.current) {
        guard !search.disabled, search.memo == nil else {
            found.plugins.withLock { $0 = PluginDiscovery.scan(search, hostVersion: hostVersion) }
            return
        }
        let work = ScanWork(search: search, hostVersion: hostVersion, into: found)
        var started = pthread_t()
        let argument = Unmanaged.passRetained(work).toOpaque()
        let status = pthread_create(&started, nil, { argument in
            // `argument` is the retained ScanWork passed to pthread_create just above: never nil.
            guard let argument else { return nil }
            Unmanaged<ScanWork>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        }, argument)
        if status == 0 {
            thread.withLock { $0 = started }
        } else {
            Unmanaged<ScanWork>.fromOpaque(argument).release()
            found.plugins.withLock { $0 = PluginDiscovery.scan(search, hostVersion: hostVersion) }
        }
    }

    /// What the scan found, once it has finished.
    func wait() -> [DiscoveredPlugin] {
        join()
        return found.plugins.withLock { $0 } ?? []
    }

    deinit {
        // A host whose setup failed before it waited: the thread's stack is given back.
        join()
    }

    private func join() {
        guard let running = thread.withLock({ state in defer { state = nil }; return state }) else { return }
        pthread_join(running, nil)
    }
}

/// Where the scanning thread leaves what it found.
private final class ScanResult: Sendable {
    let plugins = Mutex<[DiscoveredPlugin]?>(nil)
}

/// What the scanning thread runs.
private final class ScanWork: Sendable {
    let search: PluginSearch
    let hostVersion: String
    let result: ScanResult

    init(search: PluginSearch, hostVersion: String, into result: ScanResult) {
        self.search = search
        self.hostVersion = hostVersion
        self.result = result
    }

    func run() {
        let plugins = PluginDiscovery.scan(search, hostVersion: hostVersion)
        result.plugins.withLock { $0 = plugins }
    }
}
