public import Model
import Synchronization

/// `services.location`: the current position from one provider (gpsd, an NMEA file or device, a
/// GPX track, a fixed point), streamed to observers while any owner has started it.
///
/// - `location` holds the latest delivered fix, `updating` whether any owner has started the
///   service, `provider` the provider's name.
/// - The host counts `start([{ distance = m }])` per owner and calls ``startUpdates(shares:)``;
///   the provider runs while any share is live (or a ``current()`` call waits). The effective
///   distance filter is the smallest asked (a share without one asks for every fix): a fix that
///   moved less than it from the last delivered one is neither stored in `location` nor sent in
///   `didUpdateLocations` (``current()`` still sees it).
/// - `didFail` carries an error value (`code`, `message`) when the provider cannot read its
///   source (gpsd unreachable: `unavailable`, once per outage) or its file is bad.
/// - A replay (`nmea` or `gpx` file) that reaches its end leaves the position where it ended;
///   `current()` then answers the last fix. Stopping and starting again replays from the start.
/// - Providers run only while needed, as Swift tasks cancelled on stop (gpsd and devices through
///   SwiftNIO); their reports reach scripts on the host loop.
///
/// ```lua
/// local loc = services.location
/// loc:on("didUpdateLocations", function(locations) print(locations[#locations].lat) end)
/// loc:start({ distance = 10 })
/// ```
public final class LocationService: StartableService {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }

    /// The latest delivered fix (a `location` data model), or nil.
    public let location: Property<Value>
    /// True while any owner has started the service.
    public let updating: Property<Bool>
    /// The provider's name: `gpsd`, `nmea`, `gpx` or `fixed`.
    public let providerName: Property<String>

    /// How recent the last fix must be for ``current()`` to answer it without waiting.
    public static let freshness: Duration = .seconds(5)

    let provider: any LocationProvider
    private let clock: any ServiceClock
    private let state = Mutex(State())

    private struct State {
        var started = false
        var distanceFilter = 0.0
        var waiters: [Int: CheckedContinuation<Result<LocationFix, ServiceError>, Never>] = [:]
        /// The waiters counted as waits on the clock (``ServiceClock/countClockWait(_:)``): those
        /// of a run that only schedules jobs on it (a replay), which only advancing can answer.
        var clockWaiters: Set<Int> = []
        /// The current run only schedules jobs on the clock (``LocationProvider/start(clock:_:)``).
        var runsOnClock = false
        var nextWaiter = 0
        /// Stops the provider's current run.
        var run: Cancellation?
        /// Counts provider runs, so reports from a cancelled run are ignored.
        var generation = 0
        var lastFix: (fix: LocationFix, received: Duration)?
        var lastDelivered: LocationFix?
        /// The provider's failure, until its next fix.
        var failure: ServiceError?
        /// The current run's source has no more fixes (a replay reached its end).
        var ended = false
    }

    /// A location service reading from `provider`, on `clock`.
    init(provider: any LocationProvider, clock: any ServiceClock) {
        self.provider = provider
        self.clock = clock
        location = Property("location", .null, changes)
        updating = Property("updating", false, changes)
        providerName = Property("provider", provider.name, changes)
    }

    /// A location service for a provider setting (`gpsd:HOST:PORT`, `nmea:FILE@10x`,
    /// `gpx:FILE@60x`, `fixed:LAT,LON[,ALT]`; nil for gpsd at 127.0.0.1:2947).
    ///
    /// - Throws: `invalid_argument` for a setting that names no provider or a file that cannot be read.
    public convenience init(setting: String?, clock: any ServiceClock = SystemClock.shared) throws(ServiceError) {
        self.init(provider: try LocationProviderSpec.provider(setting), clock: clock)
    }

    /// A location service replaying `script` on `clock` (`crescent test`'s `fake.location`).
    public convenience init(script: LocationScript, clock: any ServiceClock) {
        self.init(provider: ScriptedProvider(script: script), clock: clock)
    }

    /// The standard plugin's entry: the provider setting is read now (a bad one fails only the
    /// location service); the service is made on first use.
    /// The entry checks the setting at once (a bad `--location` is reported at start) and makes
    /// the service when a script first touches it, so a run that never does pays nothing more.
    static func entry(_ context: PluginContext) -> ServiceEntry {
        do throws(ServiceError) {
            let provider = try LocationProviderSpec.provider(setting(context))
            let clock = context.clock
            return ServiceEntry(LocationService.self) { () throws(ServiceError) in
                LocationService(provider: provider, clock: clock)
            }
        } catch {
            // A bad `provider` under [location] is named as a setting, so the host prefixes the
            // file and line as it does for every other setting; `--location` is named as itself.
            let fromConfig = context.settings["location"] == nil && !error.message.hasPrefix("[")
            return ServiceEntry(LocationService.self,
                                failed: fromConfig ? ServiceError(error.code, "[location] provider: " + error.message) : error)
        }
    }

    /// `--location`, else `provider` under `[location]`, else gpsd.
    public static func make(_ context: PluginContext) throws(ServiceError) -> [any Service] {
        [try LocationService(setting: setting(context), clock: context.clock)]
    }

    /// The provider setting: `--location`, else `provider` under `[location]`; nil for gpsd.
    private static func setting(_ context: PluginContext) throws(ServiceError) -> String? {
        var setting = context.settings["location"]
        if setting == nil {
            switch context.section("location")["provider"] {
            case .null: break
            case .string(let text): setting = text
            case let other:
                throw ServiceError(.invalidArgument, "[location] provider must be a string such as \"gpsd:127.0.0.1:2947\", got \(other.typeName)")
            }
        }
        return setting
    }

    // MARK: Start and stop

    /// `{ distance = m }`: a finite number of metres, 0 or more.
    public func checkStartOptions(_ options: Value) throws(ServiceError) {
        _ = try OptionTable.check(options, [.number("distance", in: 0...)])
    }

    public func startUpdates(shares: [Value]) {
        let filter = shares.map { share in max(0, share["distance"].doubleValue ?? 0) }.min() ?? 0
        let wasStarted = state.withLock { state in
            let wasStarted = state.started
            state.distanceFilter = filter.isFinite ? filter : 0
            state.started = true
            startRun(&state)
            return wasStarted
        }
        if !wasStarted { updating.set(true) }
    }

    public func stopUpdates() {
        let wasStarted = state.withLock { state in
            let wasStarted = state.started
            state.started = false
            stopIfIdle(&state)
            return wasStarted
        }
        if wasStarted { updating.set(false) }
    }

    private func startRun(_ state: inout State) {
        guard state.run == nil else { return }
        state.generation += 1
        state.ended = false
        state.failure = nil
        state.lastDelivered = nil   // the first fix of a run is always delivered
        let generation = state.generation
        let provider = provider
        let clock = clock
        let report: @Sendable (ProviderEvent) -> Void = { [self] event in handle(event, generation: generation) }
        if let started = provider.start(clock: clock, report) {
            state.run = started
            state.runsOnClock = true
            return
        }
        state.runsOnClock = false
        let task = Task { await provider.run(clock: clock, report) }
        let run = Cancellation()
        run.onCancel { task.cancel() }
        state.run = run
    }

    /// Stops the provider when nothing needs it: no owner and no waiting `current()`.
    private func stopIfIdle(_ state: inout State) {
        guard !state.started, state.waiters.isEmpty, let run = state.run else { return }
        run.cancel()
        state.run = nil
        state.generation += 1
    }

    // MARK: Reports

    private func handle(_ event: ProviderEvent, generation: Int) {
        var answers: [CheckedContinuation<Result<LocationFix, ServiceError>, Never>] = []
        var answer: Result<LocationFix, ServiceError>?
        var delivered: [LocationFix] = []
        var failure: ServiceError?
        var woken = 0
        state.withLock { state in
            guard generation == state.generation else { return }
            switch event {
            case .fixes(let reported):
                // Every provider's fixes pass the one check of what a fix may say.
                let fixes = reported.compactMap { $0.validated() }
                guard let last = fixes.last else { return }
                state.lastFix = (last, clock.uptime)
                state.failure = nil
                answer = .success(last)
                for fix in fixes {
                    if let previous = state.lastDelivered, state.distanceFilter > 0, fix.distance(to: previous) < state.distanceFilter {
                        continue
                    }
                    delivered.append(fix)
                    state.lastDelivered = fix
                }
            case .failed(let error):
                var error = error
                if error.service.isEmpty { error.service = "location" }
                state.failure = error
                failure = error
                answer = .failure(error)
            case .ended:
                state.ended = true
                answer = Self.endAnswer(state, provider: provider)
            }
            if answer != nil {
                answers = Array(state.waiters.values)
                state.waiters.removeAll()
                woken = state.clockWaiters.count
                state.clockWaiters.removeAll()
                stopIfIdle(&state)
            }
        }
        // Counted down by the job that answers, so a runner sees the wake at once.
        if woken > 0 { clock.countClockWait(-woken) }
        if let last = delivered.last {
            location.set(last.value)
            changes.emit("didUpdateLocations", .array(delivered.map(\.value)))
        }
        if let failure {
            changes.emit("didFail", failure.reported(by: "location").value)
        }
        if let answer {
            for continuation in answers { continuation.resume(returning: answer) }
        }
    }

    private static func endAnswer(_ state: State, provider: any LocationProvider) -> Result<LocationFix, ServiceError> {
        if let last = state.lastFix { return .success(last.fix) }
        return .failure(state.failure ?? ServiceError(.unavailable, "the \(provider.name) replay of \(provider.source) ended without a fix",
                                                      service: "location"))
    }

    /// An error as an event payload: a read-only `error` table with `code`, `message` and `service`.
    // MARK: current()

    /// The next fix, or the last one if it came less than ``freshness`` ago. When the service is
    /// not started, the provider runs until the answer (its fixes are delivered as usual).
    ///
    /// - Throws: the provider's failure (`unavailable` while gpsd cannot be reached), or
    ///   `cancelled` when the calling task is cancelled.
    public func current() async throws(ServiceError) -> LocationFix {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let result: Result<LocationFix, ServiceError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate: Result<LocationFix, ServiceError>? = state.withLock { state in
                    if Task.isCancelled { return .failure(ServiceError(.cancelled, "the request was cancelled")) }
                    if let last = state.lastFix, clock.uptime - last.received < Self.freshness { return .success(last.fix) }
                    if state.run != nil, state.ended { return Self.endAnswer(state, provider: provider) }
                    if state.run != nil, let failure = state.failure { return .failure(failure) }
                    state.waiters[id] = continuation
                    startRun(&state)
                    if state.runsOnClock {
                        // Counted before the lock is let go: a runner that sees the wait finds its job.
                        state.clockWaiters.insert(id)
                        clock.countClockWait(1)
                    }
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let (continuation, counted) = state.withLock { state in
                let continuation = state.waiters.removeValue(forKey: id)
                let counted = state.clockWaiters.remove(id) != nil
                stopIfIdle(&state)
                return (continuation, counted)
            }
            if counted { clock.countClockWait(-1) }
            continuation?.resume(returning: .failure(ServiceError(.cancelled, "the request was cancelled")))
        }
        return try result.get()
    }
}
