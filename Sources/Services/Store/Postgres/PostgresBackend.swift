import Dispatch
import Logging
import Model
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

/// The store's records in a PostgreSQL database shared by several hosts (`[store] url =
/// "postgres://..."`), through one PostgresNIO connection per host.
///
/// Everything that touches the connection or the collections' rows runs on one serial queue of
/// its own, blocking on each statement (a round trip on a NIO thread): writes, catch-ups and
/// loads never interleave, so change sets leave in the order they are applied.
///
/// - A write is one transaction with its rows in the change log (see ``PostgresSchema``). After
///   the commit, the backend catches up until the log has passed the write, so when the write
///   answers, the collection shows it, and it shows it the way every other host does.
/// - The host's cursor is the snapshot of its last read of the log (``PostgresSnapshot``).
///   Catching up reads the transactions the new read's snapshot sees and the cursor did not:
///   those that began after it and those it saw in progress. Transaction ids commit out of
///   order, so a single id as the cursor would either skip one still open or (waiting for the
///   oldest open one in the cluster) let any idle transaction anywhere hold every host back.
///   Each transaction becomes one change set; applying is idempotent (records carry versions),
///   so reading a change twice is harmless.
/// - It catches up on each `NOTIFY`, after each reconnection and every poll interval (a
///   notification can be lost; the log cannot).
/// - Losing the connection fails the write in flight and later ones with `unavailable` until a
///   reconnection (with backoff on the host's clock) succeeds; collections keep their rows.
final class PostgresBackend: StoreBackend {
    let settings: StoreSettings
    let url: PostgresURL
    let failure: PostgresFailure
    let clock: any ServiceClock
    let queue = DispatchQueue(label: "crescent.store.postgres")
    let logger = Logger(label: "crescent.store.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The link to the server; read and changed on ``queue``.
    let link = Mutex<Link>(.unopened)
    /// The collections this host follows, by name; changed on ``queue``.
    let follows = Mutex<[String: Follow]>([:])
    /// The snapshot of the last read of the change log: every transaction it sees has been read
    /// (nil before the first load).
    let cursor = Mutex<PostgresSnapshot?>(nil)
    /// Failed reconnection attempts in a row, for the backoff.
    private let attempts = Mutex(0)
    private let poller = Mutex<StorePoller?>(nil)
    private let polls = Atomic<Int>(0)
    /// Set by tests to hold catch-ups back, as a host that is away would.
    let catchUpSuspended = Atomic<Bool>(false)
    /// A catch-up is queued for notifications: more of them meanwhile need no other.
    private let catchUpQueued = Atomic<Bool>(false)
    /// Notifications received so far, and how many of them had arrived when the last catch-up
    /// started: a notification older than that catch-up needs no other (a write's own
    /// notification arrives before its answer, so the write's catch-up covers it).
    let notifications = Atomic<Int>(0)
    let catchUpsStarted = Atomic<Int>(0)

    /// The connections' own event loop: the queue blocks on their futures, which must never
    /// wait for a loop that is itself blocked on the queue (a host's loop, the shared group).
    private static let eventLoops = EventLoops(threads: 1)

    enum Link {
        case unopened
        case connected(Session)
        /// Lost or never made: calls answer this error until a reconnection succeeds.
        case down(ServiceError)
        case closed
    }

    /// A live connection and the statement prepared on it.
    struct Session {
        let connection: PostgresConnection
        /// ``PostgresSessionFunctions/addThenReadCall``, parsed once by the server for the
        /// connection's lifetime.
        let addThenRead: PreparedQuery
    }

    /// What this host knows of one collection beyond its rows.
    struct Follow {
        weak var collection: StoreCollection?
        /// Each record's version, for idempotent apply and the update check.
        var versions: [Int64: Int64]
        /// The snapshot the rows were loaded in: changes it saw are not applied again.
        var loadedIn: PostgresSnapshot?
    }

    /// Marks code running on ``queue`` (of this backend), so a Swift caller there (a change
    /// handler writing back) runs inline instead of deadlocking.
    /// DispatchSpecificKey is created once and only handed to Dispatch, which synchronizes it.
    nonisolated(unsafe) static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    init(settings: StoreSettings, url: PostgresURL, clock: any ServiceClock) {
        self.settings = settings
        self.url = url
        self.clock = clock
        failure = PostgresFailure(url: url)
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    deinit {
        poller.withLock { $0 }?.cancel()
        if case .connected(let session) = link.withLock({ $0 }) { closeQuietly(session.connection) }
    }

    var displayName: String { url.description }

    /// Closes `connection` without waiting.
    private func closeQuietly(_ connection: PostgresConnection) {
        let closing: EventLoopFuture<Void> = connection.close()
        // Held until closed: PostgresNIO asserts that a connection is closed before it goes.
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// Runs `body` on the queue and waits for it (inline when already there).
    func onQueue<Output>(_ body: () throws(ServiceError) -> Output) throws(ServiceError) -> Output {
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) { return try body() }
        // Not queue.sync: it runs the block on the calling thread, which may be an event loop
        // (a host's), where waiting for a future is forbidden.
        let result = withoutActuallyEscaping(body) { body in
            let call = QueuedCall(body)
            let done = DispatchSemaphore(value: 0)
            queue.async {
                call.run()
                done.signal()
            }
            done.wait()
            return call.result
        }
        guard let result else { throw ServiceError(.internal, "a store call on \(failure.target) gave no result") }
        return try result.get()
    }

    // MARK: StoreBackend

    func collection(_ name: String, make: (CollectionRows) -> StoreCollection) throws(ServiceError) -> StoreCollection {
        try firstLoad(name, make: make)
    }

    func write(_ operation: StoreOperation, to collection: StoreCollection) throws(ServiceError) -> Value {
        try onQueue { () throws(ServiceError) in try perform(operation, on: collection) }
    }

    func write(size: Int, _ prepare: @escaping @Sendable () throws(ServiceError) -> StoreOperation,
               to collection: StoreCollection, reply: Reply) {
        queue.async {
            guard !reply.isCancelled else {
                reply(.failure(ServiceError(.cancelled, "the request was cancelled")))
                return
            }
            do throws(ServiceError) {
                reply(.success(try self.perform(try prepare(), on: collection, mayCommit: { reply.commit() })))
            } catch {
                reply(.failure(error))
            }
        }
    }

    func catchUpNow() throws(ServiceError) {
        try onQueue { () throws(ServiceError) in
            _ = try connection()
            try catchUp()
        }
    }

    func close() {
        let previous = link.withLock { link in
            defer { link = .closed }
            return link
        }
        poller.withLock { $0 }?.cancel()
        if case .connected(let session) = previous { closeQuietly(session.connection) }
    }

    // MARK: The connection (on the queue)

    /// The live connection, connecting on first use. Down, it answers the error that took it
    /// down while reconnection goes on in the background.
    func connection() throws(ServiceError) -> PostgresConnection {
        try session().connection
    }

    /// The live connection and its prepared statement (see ``connection()``).
    func session() throws(ServiceError) -> Session {
        switch link.withLock({ $0 }) {
        case .connected(let session): return session
        case .down(let error): throw error
        case .closed: throw ServiceError(.unavailable, "the store is closed")
        case .unopened:
            do throws(ServiceError) {
                let session = try connect()
                link.withLock { $0 = .connected(session) }
                startPolling()
                return session
            } catch {
                link.withLock { $0 = .down(error) }
                scheduleReconnection()
                throw error
            }
        }
    }

    /// Runs `query`, waiting for its rows; a lost connection takes the link down.
    func run(_ query: PostgresQuery, doing: String) throws(ServiceError) -> PostgresQueryResult {
        try send(query, doing: doing).rows()
    }

    /// Sends `query` without waiting: queries sent one after another leave together, each as soon
    /// as the server has answered the one before, with no wait on this queue in between.
    func send(_ query: PostgresQuery, doing: String) throws(ServiceError) -> SentQuery {
        let connection = try connection()
        return SentQuery(backend: self, connection: connection, doing: doing, answer: connection.query(query, logger: logger))
    }

    /// A query on its way; ``rows()`` waits for its answer.
    struct SentQuery {
        let backend: PostgresBackend
        let connection: PostgresConnection
        let doing: String
        let answer: EventLoopFuture<PostgresQueryResult>

        /// Waits for the rows; a lost connection takes the link down.
        func rows() throws(ServiceError) -> PostgresQueryResult {
            try backend.wait(for: answer, on: connection, doing: doing)
        }
    }

    /// Waits for `answer` from `connection`; a lost connection takes the link down.
    func wait<Answer: Sendable>(for answer: EventLoopFuture<Answer>, on connection: PostgresConnection, doing: String) throws(ServiceError) -> Answer {
        do {
            return try connection.answerOrClosed(answer).wait()
        } catch {
            if PostgresFailure.isConnectionLoss(error) { lost(connection, error) }
            throw failure.running(error, doing: doing)
        }
    }

    /// Runs `body` between BEGIN (`begin`) and COMMIT; anything thrown rolls it back.
    func transaction<Output>(_ begin: PostgresQuery = "BEGIN", doing: String,
                             _ body: () throws(ServiceError) -> Output) throws(ServiceError) -> Output {
        _ = try run(begin, doing: doing)
        let output: Output
        do {
            output = try body()
        } catch {
            if case .connected = link.withLock({ $0 }) { _ = try? run("ROLLBACK", doing: doing) }
            throw error
        }
        _ = try run("COMMIT", doing: doing)
        return output
    }

    private func connect() throws(ServiceError) -> Session {
        var configuration: PostgresConnection.Configuration
        if let socket = url.socketPath {
            configuration = .init(unixSocketPath: socket, username: url.user, password: url.password, database: url.database)
        } else {
            configuration = .init(host: url.host, port: url.port, username: url.user, password: url.password,
                                  database: url.database, tls: try tls())
        }
        configuration.options.connectTimeout = .seconds(10)
        let connection: PostgresConnection
        let loop = try Self.eventLoops.group().next()
        do {
            connection = try PostgresConnection.connect(on: loop, configuration: configuration,
                                                        id: 1, logger: logger).wait()
        } catch {
            throw failure.connecting(error)
        }
        let ownProcess: Int32, addThenRead: PreparedQuery
        do throws(ServiceError) {
            ownProcess = try prepareSchema(connection)
            do {
                addThenRead = try connection.answerOrClosed(connection.prepare(query: PostgresSessionFunctions.addThenReadCall)).wait()
            } catch {
                throw failure.running(error, doing: "preparing its statements")
            }
        } catch {
            closeQuietly(connection)
            throw error
        }
        // Adding the listener sends LISTEN ahead of every later statement on this connection.
        connection.addListener(channel: PostgresSchema.channel) { [weak self] _, notification in
            // This host's own writes catch up past themselves before they answer.
            guard let self, notification.backendPID != ownProcess else { return }
            notifications.add(1, ordering: .acquiringAndReleasing)
            guard !catchUpQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
            queue.async {
                self.catchUpQueued.store(false, ordering: .releasing)
                guard self.catchUpsStarted.load(ordering: .acquiring) < self.notifications.load(ordering: .acquiring) else { return }
                self.catchUpQuietly()
            }
        }
        connection.closeFuture.whenComplete { [weak self, weak connection] _ in
            guard let self, let connection else { return }
            queue.async { self.lost(connection, ChannelError.ioOnClosedChannel) }
        }
        return Session(connection: connection, addThenRead: addThenRead)
    }

    private func tls() throws(ServiceError) -> PostgresConnection.Configuration.TLS {
        guard url.tlsMode != .disable else { return .disable }
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch url.tlsMode {
        case .verifyFull: configuration.certificateVerification = .fullVerification
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        default: configuration.certificateVerification = .none
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ServiceError(.io, "cannot set up TLS for \(failure.target): \(error)")
        }
        switch url.tlsMode {
        case .allow, .prefer: return .prefer(context)
        default: return .require(context)
        }
    }

    /// Creates the tables on first use and upgrades older ones (one host at a time), and refuses a
    /// newer schema.
    ///
    /// - Returns: the connection's server process id, which signs its notifications.
    private func prepareSchema(_ connection: PostgresConnection) throws(ServiceError) -> Int32 {
        func run(_ query: PostgresQuery) throws(ServiceError) -> PostgresQueryResult {
            do {
                return try connection.answerOrClosed(connection.query(query, logger: logger)).wait()
            } catch {
                throw failure.running(error, doing: "preparing its tables")
            }
        }
        _ = try run("BEGIN")
        do throws(ServiceError) {
            _ = try run("SELECT pg_advisory_xact_lock(\(PostgresSchema.lockKey))")
            _ = try run(PostgresQuery(unsafeSQL: PostgresSchema.meta))
            var found: Int64?
            for row in try run("SELECT value FROM crescent_meta WHERE key = 'schema_version'") {
                found = try? row.decode(Int64.self)
            }
            if let found, found > PostgresSchema.version {
                throw ServiceError(.unavailable, "\(failure.target) has store schema version \(found), newer than this crescent knows (\(PostgresSchema.version)): upgrade crescent")
            }
            let current = Int(found ?? 0)
            if current < PostgresSchema.migrations.count {
                for step in PostgresSchema.migrations[current...] {
                    for statement in step { _ = try run(PostgresQuery(unsafeSQL: statement)) }
                }
                _ = try run(PostgresQuery(unsafeSQL: PostgresSchema.stamp))
            }
            for definition in PostgresSessionFunctions.definitions {
                do {
                    _ = try connection.answerOrClosed(connection.query(PostgresQuery(unsafeSQL: definition), logger: logger)).wait()
                } catch {
                    throw failure.running(error, doing: "creating its session functions in pg_temp (the user needs the TEMPORARY privilege on the database)")
                }
            }
            var process: Int32 = 0
            for row in try run("SELECT pg_backend_pid()") {
                process = try decode { try row.decode(Int32.self) }
            }
            _ = try run("COMMIT")
            return process
        } catch {
            _ = try? run("ROLLBACK")
            throw error
        }
    }

    /// Takes the link down after `connection` failed or closed, and starts reconnecting.
    func lost(_ connection: PostgresConnection, _ error: any Error) {
        let wasLive = link.withLock { link -> Bool in
            guard case .connected(let current) = link, current.connection === connection else { return false }
            link = .down(failure.running(error, doing: "talking to it"))
            return true
        }
        guard wasLive else { return }
        closeQuietly(connection)
        scheduleReconnection()
    }

    /// Tries again after 50 ms, doubling up to 2 s, on the host's clock.
    private func scheduleReconnection() {
        let attempt = attempts.withLock { attempts in
            defer { attempts += 1 }
            return attempts
        }
        let delay = Duration.milliseconds(min(50 << min(attempt, 6), 2_000))
        _ = clock.schedule(after: delay) { [weak self] in
            guard let self else { return }
            queue.async { self.reconnect() }
        }
    }

    private func reconnect() {
        guard case .down = link.withLock({ $0 }) else { return }
        do throws(ServiceError) {
            let session = try connect()
            let stored = link.withLock { link -> Bool in
                guard case .down = link else { return false }
                link = .connected(session)
                return true
            }
            guard stored else { return closeQuietly(session.connection) }     // closed meanwhile
            attempts.withLock { $0 = 0 }
            startPolling()
            catchUpQuietly()
        } catch {
            link.withLock { link in if case .down = link { link = .down(error) } }
            scheduleReconnection()
        }
    }

    private func startPolling() {
        poller.withLock { poller in
            guard poller == nil else { return }
            poller = StorePoller(interval: .nanoseconds(Int64(clamping: settings.pollInterval)), clock: clock) { [weak self] in
                guard let self else { return false }
                queue.async { self.poll() }
                return true
            }
        }
    }

    /// Each poll catches up; about once a minute it also compacts the log.
    private func poll() {
        guard case .connected = link.withLock({ $0 }) else { return }
        catchUpQuietly()
        let every = max(1, Int(60_000_000_000 / max(settings.pollInterval, 1)))
        if polls.wrappingAdd(1, ordering: .relaxed).oldValue % every == 0 { _ = try? compact() }
    }
}

/// A call handed to the queue by a thread that waits for it.
/// Unchecked: `body` runs and `result` is written on the queue before the semaphore is
/// signalled, and both are touched by the caller only before queuing and after the wait, so the
/// semaphore orders every access; `body` does not outlive the caller's wait.
private final class QueuedCall<Output>: @unchecked Sendable {
    private var body: (() throws(ServiceError) -> Output)?
    var result: Result<Output, ServiceError>?

    init(_ body: @escaping () throws(ServiceError) -> Output) { self.body = body }

    /// Runs the body once and lets go of it, before the caller's wait ends.
    func run() {
        guard let work = body else { return }
        body = nil
        do throws(ServiceError) { result = .success(try work()) } catch { result = .failure(error) }
    }
}
