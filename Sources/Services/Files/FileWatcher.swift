public import Model
import Synchronization

/// A watch made by `files:watch(path[, options])`: event `didChange { changes = { { path, kind } } }`
/// once per burst of changes, `path`, `active`, `cancel()`.
///
/// Its caller's owner holds it like a subscription: it watches from the moment the host holds
/// it until `cancel()` or the owner's end, and keeps the run alive meanwhile. When the watched
/// folder is deleted (or moved away) it delivers that `deleted` change, turns `active` false and
/// lets the run end: inotify can see nothing there again.
///
/// ```lua
/// local watch = services.files:watch("src", { recursive = true, glob = "*.lua" })
/// watch:on("didChange", function(e) for _, c in ipairs(e.changes) do print(c.kind, c.path) end end)
/// ```
public final class FileWatcher: OwnedModelObject {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }
    /// The path as the script gave it (its bytes, UTF-8 or not).
    let filePath: FilePath
    /// The path as the script gave it (bytes that are not UTF-8 written `\xFF`).
    public var path: String { filePath.text ?? filePath.shown }
    private let inotify: InotifyWatch
    private let reactor: DescriptorReactor
    private let state = Mutex<Phase>(.made)

    /// Where the watcher is in its life.
    private enum Phase {
        case made
        case watching(finished: (@Sendable () -> Void)?)
        /// Cancelled, its owner ended, or its folder went away.
        case ended
    }

    /// - Throws: what ``InotifyWatch`` throws when the system refuses the watch.
    init(path: FilePath, settings: InotifyWatch.Settings, clock: any ServiceClock, reactor: DescriptorReactor) throws(ServiceError) {
        filePath = path
        self.reactor = reactor
        let link = WeakBox<FileWatcher>()
        let box = WeakBox<InotifyWatch>()
        inotify = try InotifyWatch(settings, reactor: reactor, deliver: { batch in
            link.object?.changes.emit("didChange", batch.value)
        }, now: { clock.uptime }, scheduleFlush: { generation, delay in
            clock.schedule(after: delay) {
                // Counted from here, on the clock's thread: a test's clock waits for it.
                guard let watch = box.object else { return }
                watch.began()
                reactor.submit {
                    watch.debounceFired(generation: generation)
                    watch.ended()
                }
            }
        }, folderGone: {
            link.object?.end()
        })
        box.object = inotify
        link.object = self
    }

    /// True until cancelled or its owner ended.
    public var isActive: Bool {
        state.withLock { if case .ended = $0 { false } else { true } }
    }

    /// Waits for the world, not for itself: a test moves on while it watches, but not while a
    /// change the kernel has already queued is on its way (``InotifyWatch/isBusy``).
    public var isBusy: Bool { isActive && inotify.isBusy }

    public func adopt(finished: @escaping @Sendable () -> Void) {
        start(finished: finished)
    }

    /// Starts watching (``adopt(finished:)`` does it for scripts; Swift callers call it).
    public func start(finished: (@Sendable () -> Void)? = nil) {
        let starts: Bool = state.withLock { phase in
            guard case .made = phase else { return false }
            phase = .watching(finished: finished)
            return true
        }
        guard starts else { return }
        let inotify = self.inotify
        inotify.began()
        reactor.submit {
            inotify.start()
            inotify.ended()
        }
    }

    public func ownerEnded() { cancel() }

    /// Stops watching for good. Idempotent.
    public func cancel() {
        let inotify = self.inotify
        reactor.submit { inotify.stop() }
        end()
    }

    /// Marks it ended (`active` false) and lets its owner go, once.
    private func end() {
        let (ending, finished): (Bool, (@Sendable () -> Void)?) = state.withLock { phase in
            defer { phase = .ended }
            switch phase {
            case .made: return (true, nil)
            case .watching(let finished): return (true, finished)
            case .ended: return (false, nil)
            }
        }
        guard ending else { return }
        changes.propertyChanged("active", to: false)
        finished?()
    }
}
