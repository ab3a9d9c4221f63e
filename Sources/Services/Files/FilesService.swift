public import Model

/// `services.files`: files and folders off the loop, and watches over inotify.
///
/// `read`, `write` (atomic: a temporary file in the same folder, flushed, then renamed over the
/// target), `list` and `stat` run as Swift tasks, so a slow disk never stalls the loop; errors
/// name the path. `watch` hands back a ``FileWatcher``: bursts of changes are coalesced (by
/// default until 50 ms pass without one, timed by the host's clock), an editor's save through a
/// temporary file and a rename is one `modified`, and a recursive watch follows folders made
/// after it started.
///
/// ```lua
/// local text, err = services.files:read("notes.txt")
/// services.files:write("notes.txt", text .. "\nmore")
/// ```
public final class FilesService: Service {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }

    private let clock: any ServiceClock
    /// The permission seam: every path is checked here before it is read, written or watched,
    /// and what the check answers is what is reached.
    private let access: ServiceAccess
    private let reactor = DescriptorReactor.shared

    /// The most `read` returns: 64 MiB.
    public static let readLimit = 64 << 20
    /// A burst ends when no change came for this long, unless `debounce` says otherwise.
    public static let defaultDebounce = 0.05

    public init(clock: any ServiceClock = SystemClock.shared, access: ServiceAccess = .unrestricted) {
        self.clock = clock
        self.access = access
    }

    static func entry(_ context: PluginContext) -> ServiceEntry {
        let clock = context.clock
        return ServiceEntry(FilesService.self) { () throws(ServiceError) in FilesService(clock: clock) }
    }

    /// The same service (its clock) for a caller reaching only what `access` lets it: a plugin.
    public func restricted(to access: ServiceAccess) -> FilesService {
        FilesService(clock: clock, access: access)
    }

    /// The entry a plugin's host gets for `files` in place of `entry` (the host's), reaching
    /// paths through `access` (the plugin's grants).
    public static func entry(over entry: ServiceEntry, access: ServiceAccess) -> ServiceEntry {
        ServiceEntry(named: serviceName, declaration: { declaration }) { () throws(ServiceError) in
            guard let files = try entry.service() as? FilesService else {
                throw ServiceError(.internal, "the files service is not the standard one")
            }
            return files.restricted(to: access)
        }
    }

    /// `path` as ``access`` lets it be reached for `use` (itself for scripts).
    private func checked(_ path: FilePath, _ use: ServiceAccess.PathUse) throws(ServiceError) -> FilePath {
        FilePath(bytes: try access.checkPath(path.bytes, use))
    }

    public func read(_ path: String) throws(ServiceError) -> [UInt8] {
        try read(FilePath(path))
    }

    /// Paths are their bytes here (`read`, `write`, `list`, `stat`, `watch`): a name that is not
    /// UTF-8 is reached as exactly that name.
    func read(_ path: FilePath) throws(ServiceError) -> [UInt8] {
        try FileSystem.read(try checked(path, .read), limit: Self.readLimit)
    }

    public func write(_ path: String, _ bytes: [UInt8]) throws(ServiceError) {
        try write(FilePath(path), bytes)
    }

    func write(_ path: FilePath, _ bytes: [UInt8]) throws(ServiceError) {
        try FileSystem.write(try checked(path, .write), bytes)
    }

    /// The names in the folder `path`, sorted (one that is not UTF-8 with its other bytes
    /// written `\xFF`: scripts get its bytes through ``list(_:glob:)-(FilePath,_)``).
    public func list(_ path: String, glob: String?) throws(ServiceError) -> [String] {
        try list(FilePath(path), glob: glob).map { $0.text ?? $0.shown }
    }

    func list(_ path: FilePath, glob: String?) throws(ServiceError) -> [FilePath] {
        let path = try checked(path, .read)
        let pattern: PathGlob? = if let glob { try PathGlob(glob) } else { nil }
        return try FileSystem.list(path, glob: pattern)
    }

    public func stat(_ path: String) throws(ServiceError) -> Value {
        try stat(FilePath(path))
    }

    func stat(_ path: FilePath) throws(ServiceError) -> Value {
        try FileSystem.describe(try checked(path, .entry))
    }

    /// A watcher of `path` (a folder, or one file); it starts once the caller holds it.
    ///
    /// - Throws: `not_found` for a path that does not exist, `invalid_argument` for bad options,
    ///   `permission` for a folder that cannot be read, `io` past the system's inotify limits.
    public func watch(_ path: String, recursive: Bool = false, glob: String? = nil,
                      debounce: Double = FilesService.defaultDebounce) throws(ServiceError) -> FileWatcher {
        try watch(FilePath(path), recursive: recursive, glob: glob, debounce: debounce)
    }

    func watch(_ path: FilePath, recursive: Bool = false, glob: String? = nil,
               debounce: Double = FilesService.defaultDebounce) throws(ServiceError) -> FileWatcher {
        // Watched where the check says; shown as given. (An empty path is refused with the
        // other functions' arguments.)
        let reached = try checked(path, .read)
        var trimmed = reached.bytes
        while trimmed.count > 1 && trimmed.last == UInt8(ascii: "/") { trimmed.removeLast() }
        let target = FilePath(bytes: trimmed)
        let pattern: PathGlob? = if let glob { try PathGlob(glob) } else { nil }
        _ = try FileSystem.describe(target)
        let settings: InotifyWatch.Settings
        if FileSystem.isFolder(target) {
            settings = .init(folder: target, onlyName: nil, recursive: recursive, glob: pattern, debounce: debounce)
        } else {
            let (folder, name) = target.split
            settings = .init(folder: folder.isEmpty ? FilePath(".") : folder, onlyName: name, recursive: false, glob: nil, debounce: debounce)
        }
        try reactor.ensureRunning()
        return try FileWatcher(path: path, settings: settings, clock: clock, reactor: reactor)
    }
}
