import Foundation
public import Model
import Synchronization

/// The `feeds` service: RSS, Atom and JSON Feed subscriptions, polled, with new items announced
/// once to every observer.
///
/// - `add(url[, { interval = s }])` subscribes and answers the feed's info after its first
///   fetch; `remove(url)` unsubscribes; `refresh([url])` fetches now and answers **its caller
///   alone** with that fetch's new items, while `didUpdate { feed, newItems }` goes to every
///   observer (a fetch without new items sends none); `didFail { feed, error }` reports a fetch
///   that failed (the feed stays subscribed and is tried again, backing off).
/// - `feeds` lists the subscriptions (`feed { url, title, interval, lastChecked, lastError,
///   itemCount }`), `latest` the ``latestCount`` newest items across them.
/// - Each feed is polled every `interval` seconds with `If-None-Match`/`If-Modified-Since`; a
///   304 is a quiet success. Errors back off exponentially (see ``FeedSettings``).
/// - Subscriptions, HTTP validators and every item seen live in the store's database
///   (``FeedArchive``): after a restart the service picks its feeds up again on first use and
///   never announces an item twice.
///
/// ```lua
/// local feeds = services.feeds
/// feeds:on("didUpdate", function(update) for _, item in ipairs(update.newItems) do print(item.title) end end)
/// feeds:add("https://example.org/feed.xml", { interval = 600 }, function(feed, err) print(feed and feed.title or err) end)
/// ```
public final class FeedsService: Service {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }

    /// The subscriptions, as an array of `feed` data models.
    let feedList: Property<Value>
    /// The newest items, as an array of `item` data models.
    let latest: Property<Value>
    let settings: FeedSettings

    /// How many items `latest` holds.
    public static let latestCount = 50

    private let archive: any FeedArchive
    private let transport: any FeedTransport
    private let clock: any ServiceClock
    private let state = Mutex(State())

    private struct State {
        /// The stored subscriptions are read (on first use) or being read.
        var loaded = false
        /// The read is under way off the loop (another process held the database's lock).
        var loading = false
        /// Urls removed while the read was under way: what it brings of them is dropped.
        var removedWhileLoading: Set<String> = []
        var subscriptions: [String: Subscription] = [:]
        /// Urls in the order they were added.
        var order: [String] = []
    }

    private struct Subscription {
        var stored: StoredFeed
        var lastError: ServiceError?
        var failures = 0
        /// The next poll, waiting on the clock or fetching.
        var poller: Cancellation?
        /// Which poller is current: one replaced while it fetched does not schedule another.
        var pollerGeneration = 0
    }

    init(archive: any FeedArchive, settings: FeedSettings, transport: any FeedTransport, clock: any ServiceClock) {
        self.archive = archive
        self.clock = clock
        self.settings = settings
        self.transport = transport
        feedList = Property("feeds", .array([]), changes)
        latest = Property("latest", .array([]), changes)
    }

    deinit {
        for subscription in state.withLock({ $0.subscriptions.values }) { subscription.poller?.cancel() }
    }

    // MARK: The API

    /// Subscribes to `url`, polled every `interval` seconds (the default when nil), and fetches
    /// it. A feed already subscribed takes the new interval and is fetched now.
    ///
    /// - Returns: the feed's info after that fetch.
    /// - Throws: `invalid_argument` for a URL or interval it refuses (nothing is subscribed);
    ///   the fetch's error otherwise (the feed stays subscribed and is retried).
    public func add(_ url: String, interval: Double?) async throws(ServiceError) -> Value {
        loadIfNeeded()
        let url = try Self.checkURL(url)
        let interval = interval ?? settings.interval
        guard interval.isFinite, interval >= settings.minInterval else {
            throw ServiceError(.invalidArgument, "interval must be at least \(FeedSettings.format(settings.minInterval)) seconds "
                               + "([feeds] min_interval), got \(FeedSettings.format(interval))")
        }
        let stored = try archive.subscribe(url, interval: interval, now: clock.wallTime)
        state.withLock { state in
            if state.subscriptions[url] == nil { state.order.append(url) }
            state.subscriptions[url, default: Subscription(stored: stored)].stored.interval = interval
            state.subscriptions[url]?.poller?.cancel()
            state.subscriptions[url]?.poller = nil
            state.subscriptions[url]?.pollerGeneration += 1
        }
        publishFeeds()
        do {
            _ = try await fetch(url)
        } catch {
            startPolling(url)
            throw error
        }
        startPolling(url)
        return info(url) ?? .null
    }

    /// Unsubscribes from `url` and forgets its items. It answers at once: the subscription goes
    /// from `feeds` and its items from `latest` now, and the database forgets them without
    /// holding the caller up (a failure there, such as another process keeping the database
    /// locked, is a `didFail` of the feed). While the subscriptions are still being read, any
    /// URL is taken.
    ///
    /// - Throws: `not_found` when `url` is not subscribed.
    public func remove(_ url: String) throws(ServiceError) {
        loadIfNeeded()
        let (removed, whileLoading) = state.withLock { state -> (Subscription?, Bool) in
            let subscription = state.subscriptions.removeValue(forKey: url)
            subscription?.poller?.cancel()
            state.order.removeAll { $0 == url }
            if state.loading { state.removedWhileLoading.insert(url) }
            return (subscription, state.loading)
        }
        guard removed != nil || whileLoading else { throw Self.unknown(url) }
        publishFeeds()
        latest.set(.array((latest.value.arrayValue ?? []).filter { $0["feed"] != .string(HTTPTarget.redacted(url)) }))
        let feed = removed.map(Self.info) ?? .model(DataModel(Self.feedSchema, [.string(HTTPTarget.redacted(url))]))
        archive.unsubscribeWithoutWaiting(url, size: 1 + (removed?.stored.itemCount ?? Self.latestCount)) { [weak self] outcome in
            guard case .failure(let error) = outcome, let self else { return }
            changes.emit("didFail", .object(["feed": feed, "error": error.reported(by: "feeds").value]))
        }
    }

    /// Fetches `url` (or every feed, at once, when nil) now and returns the new items, newest
    /// first. `didUpdate` and `didFail` go out as for a poll.
    ///
    /// - Throws: `not_found` for a URL not subscribed; the fetch's error for one feed; for all
    ///   feeds, the first error only when every fetch failed.
    public func refresh(_ url: String?) async throws(ServiceError) -> [FeedItem] {
        loadIfNeeded()
        if let url {
            guard state.withLock({ $0.subscriptions[url] != nil }) else { throw Self.unknown(url) }
            return Self.newestFirst(try await fetch(url))
        }
        let urls = state.withLock { $0.order }
        let results = await withTaskGroup(of: Result<[FeedItem], ServiceError>.self) { group in
            for url in urls {
                group.addTask { () async -> Result<[FeedItem], ServiceError> in
                    do throws(ServiceError) { return .success(try await self.fetch(url)) } catch { return .failure(error) }
                }
            }
            var results: [Result<[FeedItem], ServiceError>] = []
            for await result in group { results.append(result) }
            return results
        }
        let items = results.compactMap { try? $0.get() }
        if items.isEmpty, let failure = results.lazy.compactMap({ result -> ServiceError? in
            if case .failure(let error) = result { return error }
            return nil
        }).first {
            throw failure
        }
        return Self.newestFirst(items.flatMap { $0 })
    }

    // MARK: Fetching

    /// Fetches one feed, records what it holds and reports it: `didUpdate` with the items never
    /// seen before (if any), or `didFail`. Returns the new items, in document order.
    private func fetch(_ url: String) async throws(ServiceError) -> [FeedItem] {
        guard let known = state.withLock({ $0.subscriptions[url]?.stored }) else { throw Self.unknown(url) }
        let request = FeedRequest(url: url, etag: known.etag, lastModified: known.lastModified,
                                  timeout: settings.timeout, maxBytes: settings.maxBytes)
        do throws(ServiceError) {
            let response = try await transport.fetch(request)
            let now = clock.wallTime
            if response.status == 304 {
                try archive.touch(url, checked: now)
                succeeded(url) { $0.lastChecked = now }
                return []
            }
            guard (200..<300).contains(response.status) else { throw Self.statusError(response.status, url: url) }
            // Links resolve against the URL without its user information, which they must not carry.
            let parsed = try FeedParser.parse(response.body, url: Self.withoutUserInfo(url))
            var stored = known
            stored.title = parsed.title.isEmpty ? (known.title.isEmpty ? Self.host(of: url) : known.title) : parsed.title
            stored.etag = response.headers["etag"]
            stored.lastModified = response.headers["last-modified"]
            stored.lastChecked = now
            stored.itemCount = parsed.items.count
            // Removed while it was being fetched: record nothing.
            guard state.withLock({ $0.subscriptions[url] != nil }) else { return [] }
            let fresh = try archive.record(stored, items: parsed.items, now: now)
            succeeded(url) { $0 = stored }
            publishLatest()
            if !fresh.isEmpty, let feed = info(url) {
                changes.emit("didUpdate", .object(["feed": feed, "newItems": .array(fresh.map(\.value))]))
            }
            return fresh
        } catch {
            var error = error
            if error.service.isEmpty { error.service = "feeds" }
            // A poll stopped by remove() or a new add(): nothing failed.
            if error.code == .cancelled && Task.isCancelled { throw error }
            failed(url, error)
            throw error
        }
    }

    /// Notes an answer from `url`: no error, no failures, and `update` applied to what is stored.
    private func succeeded(_ url: String, _ update: (inout StoredFeed) -> Void) {
        state.withLock { state in
            guard var subscription = state.subscriptions[url] else { return }
            update(&subscription.stored)
            subscription.lastError = nil
            subscription.failures = 0
            state.subscriptions[url] = subscription
        }
        publishFeeds()
    }

    private func failed(_ url: String, _ error: ServiceError) {
        let now = clock.wallTime
        let known = state.withLock { state in
            guard state.subscriptions[url] != nil else { return false }
            state.subscriptions[url]?.lastError = error
            state.subscriptions[url]?.failures += 1
            state.subscriptions[url]?.stored.lastChecked = now
            return true
        }
        guard known else { return }
        try? archive.touch(url, checked: now)
        publishFeeds()
        if let feed = info(url) {
            changes.emit("didFail", .object(["feed": feed, "error": error.reported(by: "feeds").value]))
        }
    }

    // MARK: Polling

    /// Starts (or restarts) the poller of `url`: it waits the feed's interval (longer after
    /// failures), fetches, and again, until the feed is removed or the service goes away.
    ///
    /// Each wait is a job of the clock and each fetch a task it starts, so on a manual clock
    /// advancing time runs every poll due by then, in order with everything else.
    private func startPolling(_ url: String, firstDelay: Double? = nil) {
        state.withLock { state in
            guard var subscription = state.subscriptions[url] else { return }
            subscription.poller?.cancel()
            subscription.pollerGeneration += 1
            let first = firstDelay ?? settings.delay(interval: subscription.stored.interval, failures: subscription.failures)
            subscription.poller = schedulePoll(url, after: first, generation: subscription.pollerGeneration)
            state.subscriptions[url] = subscription
        }
    }

    /// The poll of `url` `seconds` from now, which schedules the next one when it is still the
    /// current poller of a subscribed feed.
    private func schedulePoll(_ url: String, after seconds: Double, generation: Int) -> Cancellation {
        clock.task(after: .seconds(seconds: seconds)) { [weak self] in
            guard let self, !Task.isCancelled else { return }
            let wait = await poll(url)
            guard !Task.isCancelled else { return }
            state.withLock { state in
                guard state.subscriptions[url]?.pollerGeneration == generation else { return }
                state.subscriptions[url]?.poller = schedulePoll(url, after: wait, generation: generation)
            }
        }
    }

    /// One poll: fetches `url` and returns the seconds until the next.
    private func poll(_ url: String) async -> Double {
        _ = try? await fetch(url)
        return state.withLock { state in
            guard let subscription = state.subscriptions[url] else { return settings.interval }
            return settings.delay(interval: subscription.stored.interval, failures: subscription.failures)
        }
    }

    /// Reads the stored subscriptions once, on first use, and starts polling them: each is
    /// fetched when its interval since the last check has passed (at once if it has).
    ///
    /// It never waits on the caller's thread (the host's loop): when the database cannot be read
    /// at once (another process holds the lock its open needs), `feeds` and `latest` stay empty
    /// and the read goes on off the loop, their change reporting it; a lock held past the
    /// store's wait is tried again a second later.
    func loadIfNeeded() {
        let first = state.withLock { state in
            defer { state.loaded = true }
            return !state.loaded
        }
        guard first else { return }
        if let snapshot = archive.snapshotIfFree(latest: Self.latestCount) { return loaded(snapshot) }
        state.withLock { $0.loading = true }
        archive.snapshotLater(latest: Self.latestCount) { [weak self] snapshot in self?.loaded(snapshot) }
    }

    /// How long a read of the subscriptions that met another process's lock waits to try again.
    static let loadRetryDelay = Duration.seconds(1)

    private func loaded(_ outcome: Result<FeedSnapshot, ServiceError>) {
        let snapshot: FeedSnapshot
        switch outcome {
        case .success(let read):
            snapshot = read
        case .failure(let error) where error.code == .unavailable:
            _ = clock.schedule(after: Self.loadRetryDelay) { [weak self] in
                guard let self else { return }
                state.withLock { $0.loaded = false }
                loadIfNeeded()
            }
            return
        case .failure:
            // Nothing to resume; the calls that use the database report what is wrong.
            state.withLock { $0.loading = false }
            return
        }
        let now = clock.wallTime
        var resumed: [(String, Double)] = []
        let removed = state.withLock { state in
            for feed in snapshot.feeds where state.subscriptions[feed.url] == nil && !state.removedWhileLoading.contains(feed.url) {
                state.subscriptions[feed.url] = Subscription(stored: feed)
                state.order.append(feed.url)
                resumed.append((feed.url, max(0, (feed.lastChecked ?? 0) + feed.interval - now)))
            }
            defer { state.loading = false; state.removedWhileLoading = [] }
            return state.removedWhileLoading
        }
        for (url, delay) in resumed { startPolling(url, firstDelay: delay) }
        publishFeeds()
        latest.set(.array(snapshot.latest.filter { !removed.contains($0.feed) }.map(\.value)))
    }

    // MARK: What scripts see

    /// `url` without `user:password@` (`redacted` writes `***@` where it was).
    static func withoutUserInfo(_ url: String) -> String {
        let redacted = HTTPTarget.redacted(url)
        guard redacted != url, let marker = redacted.range(of: "://***@") else { return url }
        return redacted.replacingCharacters(in: marker, with: "://")
    }

    /// The `feed` data model of `url`, or nil when it is not subscribed.
    func info(_ url: String) -> Value? {
        state.withLock { state in state.subscriptions[url].map(Self.info) }
    }

    private static func info(_ subscription: Subscription) -> Value {
        let stored = subscription.stored
        return .model(DataModel(feedSchema, [
            .string(HTTPTarget.redacted(stored.url)), .string(stored.title), .number(stored.interval),
            stored.lastChecked.map(Value.number) ?? .null,
            subscription.lastError?.reported(by: "feeds").value ?? .null,
            .integer(Int64(stored.itemCount)),
        ]))
    }

    /// The fields of the `feed` data model, declared once (a misspelled read names them).
    static let feedSchema = ModelSchema("feed", ["url", "title", "interval", "lastChecked", "lastError", "itemCount"])

    private func publishFeeds() {
        feedList.set(.array(state.withLock { state in state.order.compactMap { state.subscriptions[$0].map(Self.info) } }))
    }

    private func publishLatest() {
        guard let items = try? archive.latest(limit: Self.latestCount) else { return }
        latest.set(.array(items.map(\.value)))
    }

    // MARK: Helpers

    /// An error as an event payload: a read-only `error { code, message, service }`.
    /// `url` trimmed, if it is an absolute http or https URL with a host.
    static func checkURL(_ text: String) throws(ServiceError) -> String {
        let url = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = parsed.host, !host.isEmpty else {
            throw ServiceError(.invalidArgument, "url must be an absolute http or https URL such as https://example.org/feed.xml, got \"\(HTTPTarget.redacted(text))\"")
        }
        // What the http client would refuse (a port past 65535) is refused before anything is stored.
        _ = try HTTPTarget(url)
        return url
    }

    private static func unknown(_ url: String) -> ServiceError {
        ServiceError(.notFound, "no feed \(HTTPTarget.redacted(url)) is subscribed (add it first)")
    }

    /// A non-2xx answer as an error: 404 and 410 `not_found`, 401 and 403 `permission`, 429 and
    /// 5xx `unavailable`, the rest `network`.
    static func statusError(_ status: Int, url: String) -> ServiceError {
        let code: ServiceError.Code = switch status {
        case 404, 410: .notFound
        case 401, 403: .permission
        case 429, 500...599: .unavailable
        default: .network
        }
        return ServiceError(code, "HTTP \(status) from \(HTTPTarget.redacted(url))")
    }

    private static func host(of url: String) -> String { URL(string: url)?.host ?? url }

    private static func newestFirst(_ items: [FeedItem]) -> [FeedItem] {
        items.enumerated().sorted { lhs, rhs in
            let left = lhs.element.published ?? -.infinity, right = rhs.element.published ?? -.infinity
            return left != right ? left > right : lhs.offset < rhs.offset
        }.map(\.element)
    }

}
