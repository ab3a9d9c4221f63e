import CDescriptors
import Foundation
import Glibc
import Model
import Synchronization

/// One watcher's inotify instance as the reactor thread sees it: the folders it watches (all of
/// them below the root when recursive, new ones added as they appear), the paths it knows exist
/// (so a file renamed over one that existed reads as `modified`), and the changes waiting for
/// the end of the burst. Confined to the ``DescriptorReactor`` thread.
final class InotifyWatch: @unchecked Sendable {
    // @unchecked: made on the caller's thread before it is shared, then touched only on the
    // reactor thread (see the type's doc); its deinit runs once nothing else holds it.

    /// What to watch and how.
    struct Settings: Sendable {
        /// The folder watched (the file's folder when a file is watched).
        let folder: FilePath
        /// When one file is watched: its name in ``folder``.
        let onlyName: FilePath?
        let recursive: Bool
        let glob: PathGlob?
        /// Seconds a burst may last: changes are delivered once none came for this long (0:
        /// each batch read is delivered at once).
        let debounce: Double
    }

    private let settings: Settings
    private let reactor: DescriptorReactor
    private var descriptor: Int32 = -1
    /// The instance's descriptor as other threads may read it (-1 once stopped), for
    /// ``isBusy``; only the reactor thread changes it after the start.
    private let shownDescriptor = Atomic<Int32>(-1)
    /// Work for this watch in progress on the reactor or queued for it: reading events (from
    /// before the read until the burst is delivered or its debounce is on the clock), a
    /// debounce that fired, the start. See ``isBusy``.
    private let inProgress = Atomic<Int>(0)
    /// Paths as their bytes: a name that is not UTF-8 is reported as it is (as U+FFFD it named
    /// a file that does not exist, or another one).
    private var folders: [Int32: FilePath] = [:]
    private var known: Set<FilePath> = []
    private var pending = ChangeBatch()
    /// Bumped by each change, so a debounce timer that fires after newer changes waits on.
    private var generation = 0
    private var flushScheduled = false
    /// Hands a burst over (to the watcher, which emits it).
    private let deliver: (ChangeBatch) -> Void
    /// Asks for ``debounceFired(generation:)`` after the given delay, on the host's clock.
    private let scheduleFlush: (Int, Duration) -> Void
    /// The host's clock's uptime, read when a change comes.
    private let now: () -> Duration
    /// When the last change came: the burst ends a debounce after it.
    private var lastChange = Duration.zero
    /// The watched folder was deleted or moved away: nothing more can come (called once, after
    /// the burst that says so was delivered, with the instance closed).
    private let folderGone: () -> Void
    /// Set when the event saying the watched folder went away was read.
    private var sawFolderGo = false
    /// Set once ``start()`` ran: the reactor reads the instance.
    private var started = false
    /// Folders the first walk has yet to list (see ``walkSome()``).
    private var unwalked: [FilePath] = []
    /// How many folders the first walk lists per turn of the reactor.
    static let foldersPerTurn = 32

    // inotify's flags (sys/inotify.h, which Swift's Glibc does not show).
    private static let modify: UInt32 = 0x2, attrib: UInt32 = 0x4, closeWrite: UInt32 = 0x8
    private static let movedFrom: UInt32 = 0x40, movedTo: UInt32 = 0x80, create: UInt32 = 0x100, delete: UInt32 = 0x200
    private static let deleteSelf: UInt32 = 0x400, moveSelf: UInt32 = 0x800, overflow: UInt32 = 0x4000, ignored: UInt32 = 0x8000
    private static let onlyFolder: UInt32 = 0x0100_0000, excludeUnlinked: UInt32 = 0x0400_0000, isFolder: UInt32 = 0x4000_0000
    private static let mask = modify | attrib | closeWrite | movedFrom | movedTo | create | delete | deleteSelf | moveSelf | onlyFolder | excludeUnlinked

    /// Opens the inotify instance and watches the watched folder itself, on the caller's thread,
    /// so that a watch the system refuses is an error at `watch` rather than a watcher that
    /// never hears anything.
    ///
    /// - Throws: `io` past the inotify instance or watch limits or the open-file limit (naming
    ///   them), `permission` for a folder that cannot be read, `unavailable` without inotify.
    init(_ settings: Settings, reactor: DescriptorReactor, deliver: @escaping (ChangeBatch) -> Void,
         now: @escaping () -> Duration, scheduleFlush: @escaping (Int, Duration) -> Void,
         folderGone: @escaping () -> Void) throws(ServiceError) {
        self.settings = settings
        self.reactor = reactor
        self.deliver = deliver
        self.now = now
        self.scheduleFlush = scheduleFlush
        self.folderGone = folderGone
        guard let initialize = SystemCalls.inotifyInit, let addWatch = SystemCalls.inotifyAddWatch else {
            throw ServiceError(.unavailable, "this system has no inotify: files.watch cannot watch '\(settings.folder.shown)'")
        }
        // A watcher is a descriptor a script asked for: it may not take those kept for the host.
        if crescent_next_descriptor_in_reserve(nil, nil) != 0 { throw Self.failure(settings.folder, EMFILE, opening: true) }
        let opened = initialize(O_CLOEXEC | O_NONBLOCK)
        guard opened >= 0 else { throw Self.failure(settings.folder, errno, opening: true) }
        // The folder must be readable too: inotify watches one the caller may not list, and
        // then reports nothing in it.
        let watch = settings.folder.withCString { folder in access(folder, R_OK | X_OK) == 0 ? addWatch(opened, folder, Self.mask) : -1 }
        guard watch >= 0 else {
            let code = watch == -1 && errno == 0 ? EACCES : errno
            close(opened)
            throw Self.failure(settings.folder, code, opening: false)
        }
        descriptor = opened
        shownDescriptor.store(opened, ordering: .sequentiallyConsistent)
        folders[watch] = settings.folder
    }

    /// True while a change the kernel has queued is not yet delivered or on the clock as a
    /// debounce: events unread on the instance, or work for it on the reactor (``began()``).
    /// Read from any thread: `crescent test`'s settling waits for it, so a spec that touches a
    /// file and then moves the clock sees the change (the reactor had often not
    /// read the event yet, and `clock.advance` delivered nothing). The queue is read first: a
    /// read of the events starts its work before it empties the queue.
    var isBusy: Bool {
        let descriptor = shownDescriptor.load(ordering: .sequentiallyConsistent)
        var queued: Int32 = 0
        if descriptor >= 0, ioctl(descriptor, UInt(FIONREAD), &queued) == 0, queued > 0 { return true }
        return inProgress.load(ordering: .sequentiallyConsistent) > 0
    }

    /// Counts work for this watch as begun (see ``isBusy``); ``ended()`` counts it done.
    func began() { inProgress.add(1, ordering: .sequentiallyConsistent) }
    func ended() { inProgress.subtract(1, ordering: .sequentiallyConsistent) }

    /// Closes an instance never started (the watcher was dropped before the host held it).
    deinit {
        if descriptor >= 0 { Self.closeAside(descriptor) }
    }

    /// The error for `code` from `inotify_init1` (`opening`) or `inotify_add_watch` of `folder`.
    private static func failure(_ folder: FilePath, _ code: Int32, opening: Bool) -> ServiceError {
        let shown = folder.shown
        switch code {
        case EMFILE where opening:
            return ServiceError(.io, "cannot watch '\(shown)': too many inotify instances or open files (the user's limit fs.inotify.max_user_instances, shared by all their programs, or ulimit -n); cancel other watchers or raise the limit")
        case ENFILE:
            return ServiceError(.io, "cannot watch '\(shown)': the system's table of open files is full")
        case ENOSPC:
            return ServiceError(.io, "cannot watch '\(shown)': too many inotify watches (the user's limit fs.inotify.max_user_watches); cancel other watchers or raise the limit")
        case ENOMEM:
            return ServiceError(.io, "cannot watch '\(shown)': not enough kernel memory for an inotify watch")
        default:
            return FileSystem.failure(folder, code)
        }
    }

    /// Starts reading the instance and watches what is below the folder (all of it when
    /// recursive). Idempotent; nothing once stopped.
    func start() {
        guard descriptor >= 0, !started else { return }
        started = true
        reactor.watch(descriptor, events: Int16(POLLIN)) { _ in
            self.began()
            defer { self.ended() }
            self.readEvents()
        }
        unwalked = [settings.folder]
        walkSome()
    }

    /// Lists ``foldersPerTurn`` of the folders the first walk has not listed yet (watching those
    /// below them when recursive), then leaves the rest to a later turn of the reactor: walking
    /// /usr/share (3,367 folders) at once held the thread every program's pipes share, and a
    /// `run({"true"})` took 0.37 s meanwhile.
    private func walkSome() {
        guard descriptor >= 0 else {
            unwalked = []
            return
        }
        for _ in 0..<Self.foldersPerTurn {
            guard let folder = unwalked.popLast() else { return }
            for name in FileSystem.names(in: folder) ?? [] {
                let path = folder.appending(name)
                known.insert(path)
                if settings.recursive, FileSystem.isFolder(path), !isLink(path), watchFolder(path) { unwalked.append(path) }
            }
        }
        if !unwalked.isEmpty { reactor.submit { self.walkSome() } }
    }

    /// Stops watching and closes the instance. Idempotent.
    func stop() {
        guard descriptor >= 0 else { return }
        if started { reactor.unwatch(descriptor) }
        shownDescriptor.store(-1, ordering: .sequentiallyConsistent)
        Self.closeAside(descriptor)
        descriptor = -1
        folders.removeAll()
        known.removeAll()
        pending = ChangeBatch()
    }

    /// Closing an inotify instance waits for the kernel (~9 ms each, measured): done on a
    /// thread of its own, so cancelling watchers never stalls the reactor (every program's
    /// pipes and every other watcher). The number is not reused before the close returns.
    private static func closeAside(_ descriptor: Int32) {
        closer.async { _ = close(descriptor) }
    }

    private static let closer = DispatchQueue(label: "crescent.inotify-close")

    /// Watches `folder` (and, when recursive, every folder below it); with `reportContents`
    /// what is in it already counts as created (a folder that appeared with files in it).
    private func add(folder: FilePath, reportContents: Bool) {
        guard watchFolder(folder) else { return }
        scan(folder: folder, reportContents: reportContents)
    }

    /// Adds `folder` to the instance; false when the system refused it.
    private func watchFolder(_ folder: FilePath) -> Bool {
        guard let addWatch = SystemCalls.inotifyAddWatch else { return false }
        let watch = folder.withCString { addWatch(descriptor, $0, Self.mask) }
        guard watch >= 0 else { return false }
        folders[watch] = folder
        return true
    }

    /// Notes what `folder` holds (see ``add(folder:reportContents:)``) and, when recursive,
    /// watches the folders in it.
    private func scan(folder: FilePath, reportContents: Bool) {
        for name in FileSystem.names(in: folder) ?? [] {
            let path = folder.appending(name)
            known.insert(path)
            if reportContents { note(path, .created) }
            if settings.recursive, FileSystem.isFolder(path), !isLink(path) { add(folder: path, reportContents: reportContents) }
        }
    }

    /// Stops watching `folder` and the folders below it: moved out of the tree, its changes
    /// would be reported under paths that no longer exist (or name something else). One moved
    /// within the tree is watched again under its new name (its `movedTo`).
    private func forget(folder: FilePath) {
        for (watch, watched) in folders where watched == folder || watched.isBelow(folder) {
            folders[watch] = nil
            _ = SystemCalls.inotifyRemoveWatch?(descriptor, watch)
        }
    }

    private func isLink(_ path: FilePath) -> Bool {
        var status = stat()
        return path.withCString { lstat($0, &status) } == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    // MARK: Events

    /// The most one event takes: `struct inotify_event` and a name of up to NAME_MAX bytes with
    /// its NUL.
    private static let largestEvent = 16 + Int(NAME_MAX) + 1

    private func readEvents() {
        // The reactor's buffer, not one of this watch's: a fresh 64 KiB array, zeroed, for every
        // wake-up cost more than the read itself, and the reactor runs one handler at a time.
        let buffer = reactor.readBuffer
        // Bounded: 16 reads per wake-up; poll reports the rest.
        for _ in 0..<16 {
            guard descriptor >= 0 else { return }
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            parse(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count))
            // Room was left for another event: the queue was empty when read, so a further
            // read would only say EAGAIN (poll reports what comes later).
            if count <= buffer.count - Self.largestEvent { break }
        }
        if sawFolderGo {
            // The watch cannot see anything again: the last burst goes now, then the watcher ends.
            flush()
            stop()
            folderGone()
            return
        }
        guard !pending.isEmpty else { return }
        if settings.debounce <= 0 {
            flush()
        } else if !flushScheduled {
            flushScheduled = true
            scheduleFlush(generation, .seconds(seconds: settings.debounce))
        }
    }

    /// `struct inotify_event { int wd; uint32_t mask, cookie, len; char name[len]; }`, back to back.
    private func parse(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset + 16 <= bytes.count {
            func word(_ at: Int) -> UInt32 {
                UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
            }
            let watch = Int32(bitPattern: word(offset)), mask = word(offset + 4), length = Int(word(offset + 12))
            let nameBytes = bytes[(offset + 16)..<min(offset + 16 + length, bytes.count)].prefix { $0 != 0 }
            offset += 16 + length
            handle(watch: watch, mask: mask, name: FilePath(bytes: nameBytes))
        }
    }

    private func handle(watch: Int32, mask: UInt32, name: FilePath) {
        if mask & Self.overflow != 0 {
            overflowed()
            return
        }
        guard let folder = folders[watch] else { return }
        if mask & Self.ignored != 0 {
            folders[watch] = nil
            // The kernel dropped the root's watch (deleted, or its file system unmounted).
            if folder == settings.folder { sawFolderGo = true }
            return
        }
        guard !name.isEmpty else {
            // The watched folder itself went away or moved: its paths mean nothing any more.
            if mask & (Self.deleteSelf | Self.moveSelf) != 0, folder == settings.folder {
                note(folder, .deleted, force: true)
                sawFolderGo = true
            }
            return
        }
        let path = folder.appending(name)
        let isFolder = mask & Self.isFolder != 0
        if mask & (Self.create | Self.movedTo) != 0 {
            // A rename over a name that existed is a change of it (an editor's save). A create
            // never is: the name did not exist just before, and if `known` has it, the first
            // walk (on the reactor, after `watch` returned) listed a file made after the watch
            // began, which was then reported `modified`.
            let existed = mask & Self.create == 0 && known.contains(path)
            known.insert(path)
            note(path, existed ? .modified : .created)
            if isFolder, settings.recursive { add(folder: path, reportContents: true) }
        } else if mask & (Self.delete | Self.movedFrom) != 0 {
            known.remove(path)
            if isFolder {
                known = known.filter { !$0.isBelow(path) }
                if mask & Self.movedFrom != 0 { forget(folder: path) }
            }
            note(path, .deleted)
        } else if !isFolder, mask & (Self.modify | Self.closeWrite | Self.attrib) != 0 {
            note(path, .modified)
        }
    }

    /// The kernel's queue overflowed (more events than `/proc/sys/fs/inotify/max_queued_events`
    /// before the reactor read them) and dropped the rest: the burst says so (`overflow = true`,
    /// and the watched path as modified, for scripts that only look at the changes), and a
    /// recursive watch walks its tree again, so folders made meanwhile are watched from now on.
    /// The instance itself keeps working: the kernel queues new events once it is read.
    private func overflowed() {
        pending.markOverflowed()
        note(settings.onlyName.map { settings.folder.appending($0) } ?? settings.folder, .modified, force: true)
        if settings.recursive { add(folder: settings.folder, reportContents: false) }
    }

    /// Adds a change that passes the filters to the burst.
    private func note(_ path: FilePath, _ kind: ChangeBatch.Kind, force: Bool = false) {
        if !force {
            let relative = FilePath(bytes: path.bytes.dropFirst(settings.folder.bytes.count + 1))
            if let only = settings.onlyName, relative != only { return }
            if let glob = settings.glob, !glob.matches(relative) { return }
        }
        pending.add(path, kind)
        generation += 1
        if settings.debounce > 0 { lastChange = now() }
    }

    /// The debounce scheduled at `scheduled` passed: delivers the burst when nothing came since,
    /// else waits again.
    func debounceFired(generation scheduled: Int) {
        guard descriptor >= 0 else { return }
        if scheduled == generation {
            flushScheduled = false
            flush()
        } else {
            // A debounce after the last change, not after this check: a change that came just
            // after the burst began (a file deleted, then made again) waited two debounces.
            scheduleFlush(generation, lastChange + .seconds(seconds: settings.debounce) - now())
        }
    }

    private func flush() {
        guard !pending.isEmpty else { return }
        let batch = pending
        pending = ChangeBatch()
        deliver(batch)
    }
}
