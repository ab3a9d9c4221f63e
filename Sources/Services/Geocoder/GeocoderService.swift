import Dispatch
public import Model
import Synchronization

/// `services.geocoder`: offline reverse and forward geocoding over GeoNames' places with at least
/// 500 inhabitants (235,397 places, shipped with Crescent), the sections of large cities among them.
///
/// Answers are placemarks (``Placemark``) as CoreLocation names places: a point in a section of a
/// city (one of Paris' arrondissements) is named after the city, with the section as its
/// `subLocality`. Calls are answered off the host loop in two lanes of the geocoder's own, each
/// in the order its calls were made: one for single-point `reverse` calls (milliseconds each),
/// one for searches and batches (which can take a second each), so a point lookup never waits
/// behind searches. The first call loads the data and those made meanwhile wait for that load;
/// once loaded the data is read-only and the lanes run at once.
///
/// ```lua
/// services.geocoder:reverse({ lat = 48.8566, lon = 2.3522 }, function(placemarks, err)
///   local place = placemarks[1]
///   print(place.locality, place.subLocality, place.country, place.timeZone)
///   --> Paris   Paris 04 Hôtel-de-Ville   France   Europe/Paris
/// end)
/// ```
public final class GeocoderService: Service {
    public let changes = ChangePublisher()
    public var interface: AnyInterface { Self.declaration }
    let loader: GeoNamesLoader
    /// Single-point `reverse` calls, cheap: never behind a search (``Lane``).
    private let quickLane = DispatchQueue(label: "crescent.geocoder.quick", qos: .userInitiated)
    /// Searches and batches, each up to a second or more.
    private let slowLane = DispatchQueue(label: "crescent.geocoder.slow", qos: .userInitiated)
    /// The last completion asked for, answered off the loop (``completions(method:argument:prefix:limit:)``).
    let completionCache = GeocoderCompletionCache()

    /// A geocoder over `loader`'s data (the shipped data by default).
    public init(loader: GeoNamesLoader = .bundled) {
        self.loader = loader
    }

    /// Which lane a call waits in: each answers its calls in order, the two at once.
    private enum Lane {
        /// A single-point `reverse`.
        case quick
        /// A `search` or a batch `reverse`.
        case slow
    }

    /// Answers `reply` with `work` over the database, after every call made before it in `lane`.
    private func answer(_ reply: Reply, in lane: Lane, _ work: @escaping @Sendable (GeoNamesDatabase) throws(ServiceError) -> Value) {
        let queue = switch lane {
        case .quick: quickLane
        case .slow: slowLane
        }
        queue.async { [loader] in
            guard !reply.isCancelled else { return }
            reply(Result { () throws(ServiceError) in try work(try loader.loadedDatabase()) })
        }
    }

    /// The standard plugin's entry: the geocoder has no settings; its data loads on the first call.
    static func entry(_ context: PluginContext) -> ServiceEntry {
        ServiceEntry(GeocoderService.self) { () throws(ServiceError) in GeocoderService() }
    }

    /// The nearest `count` places to `point`, nearest first.
    public func reverse(_ point: GeoPoint, count: Int = 1) async throws(ServiceError) -> [Placemark] {
        try await loader.database().reverse(point, count: count)
    }

    /// Places named like `query` (see ``GeoNamesDatabase/search(_:country:limit:)``).
    public func search(_ query: String, country: String? = nil, limit: Int = 10) async throws(ServiceError) -> [Placemark] {
        let database = try await loader.database()
        return try database.search(query, country: country, limit: limit)
    }

    // MARK: The declaration

    /// `location {lat=, lon=}`: what `reverse` takes.
    static let location = ArgumentType.record("location", fields: [.init("lat", .number), .init("lon", .number)])
    /// An element of a batch: checked by the service, so a missing field names its position.
    static let batchLocation = ArgumentType.record("location", fields: [.init("lat", .number, optional: true),
                                                                        .init("lon", .number, optional: true)])

    static let serviceName = "geocoder"

    static let declaration: AnyInterface = Interface<GeocoderService>(
        name: serviceName, summary: "Offline reverse and forward geocoding over GeoNames' places of 500+ inhabitants."
    ) { d in
        d.method(
            "reverse",
            [
                .init("location", .oneOf([location, .array(of: batchLocation)]),
                      "A location {lat=, lon=} (degrees), or an array of at most 500,000 of them for a batch (split a bigger one).",
                      maximumItems: maximumPlacemarks),
                .init("options", .table, "{ count = n }: how many places to answer (default 1, at most 1000; "
                      + "locations × count at most 500,000 per call).", optional: true,
                      options: reverseOptions),
            ],
            returns: "placemarks nearest first {name, locality, subLocality, admin1, admin2, countryCode, country, timeZone, lat, lon, population (nil when GeoNames has none), distance (m)}; for a batch, one such array per location, in order",
            "The places nearest to a location, by great-circle distance."
        ) { geocoder, arguments, reply in
            let lane: Lane = if case .array = arguments[0] { .slow } else { .quick }
            geocoder.answer(reply, in: lane) { database throws(ServiceError) in try reverse(arguments, in: database) }
        }
        d.method(
            "search",
            [
                .init("query", .string, "A place name, any case, with or without accents."),
                .init("options", .table, "{ country = \"FR\" (code or name), limit = n (default 10, at most 1000) }.", optional: true,
                      options: searchOptions),
            ],
            returns: "placemarks {name, locality, subLocality, admin1, admin2, countryCode, country, timeZone, lat, lon, population (nil when GeoNames has none)}: exact names first, then prefixes, then substrings; in each, a city before its sections, bigger places first (a place found by an alternate name counts a twentieth of its size); a query with no letter or digit is invalid_argument",
            "Places whose name or alternate name (Munich, München, Muenchen) matches a query, case- and accent-insensitive."
        ) { geocoder, arguments, reply in
            geocoder.answer(reply, in: .slow) { database throws(ServiceError) in try search(arguments, in: database) }
        }
    }.erased

    /// The options of `reverse` and of `search`, declared once for the call's check and the method's.
    private static let reverseOptions: [OptionTable.Option] = [.integer("count", in: 1...Int64(GeoNamesDatabase.maximumCount))]
    private static let searchOptions: [OptionTable.Option] = [.string("country"), .integer("limit", in: 1...Int64(GeoNamesDatabase.maximumCount))]

    private static func reverse(_ arguments: Arguments, in database: GeoNamesDatabase) throws(ServiceError) -> Value {
        let options = try OptionTable.check(arguments[1], reverseOptions)
        let count = options["count"]?.integerValue.map { Int($0) } ?? 1
        if case .array(let items) = arguments[0] {
            var points: [GeoPoint] = []
            points.reserveCapacity(items.count)
            for (position, item) in items.enumerated() {
                points.append(try GeoPoint(value: item, label: "location #\(position + 1): "))
            }
            // The answer is built whole before it reaches Lua, outside its memory limit: bounded here.
            guard points.count * count <= maximumPlacemarks else {
                throw ServiceError(.invalidArgument, "\(points.count) locations with count \(count) ask for \(points.count * count) placemarks, "
                                   + "more than the \(maximumPlacemarks) one call answers: ask for fewer locations or a smaller count in each call")
            }
            if count == 1 { return points.isEmpty ? .array([]) : .packed(nearestEach(points, in: database)) }
            return .array(points.map { point in .array(database.reverse(point, count: count).map(\.value)) })
        }
        let point = try GeoPoint(value: arguments[0])
        return .array(database.reverse(point, count: count).map(\.value))
    }

    /// The most placemarks one `reverse` answers (locations × count), about 0.5 GB as they are
    /// made: the answer is built before the caller's memory limit can see it. A batch of more
    /// locations than this is refused by the binding before it is converted (``ArgumentSpec/maximumItems``).
    static let maximumPlacemarks = 500_000

    /// How many points a batch needs before its halves are searched at once.
    static let parallelBatchCount = 1000

    /// The nearest place to each point, each as a one-placemark array, in order, packed into one
    /// buffer (``PackedModels``: a script gets 100,000 placemarks from it in one call, each read
    /// from the buffer until it needs a whole table). A big batch is searched and packed in two
    /// halves at once, joined in order: the caller waits for the whole answer, so a second core
    /// would otherwise sit idle.
    /// The answers are those of one search.
    static func nearestEach(_ points: [GeoPoint], in database: GeoNamesDatabase) -> PackedModels {
        let parts = points.count >= parallelBatchCount ? 2 : 1
        let size = (points.count + parts - 1) / parts
        let packed = Mutex([PackedModels.Builder?](repeating: nil, count: parts))
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let half = Array(points[(part * size)..<min(points.count, (part + 1) * size)])
            let builder = database.data.packing(database.index.nearestRows(half), from: half)
            packed.withLock { $0[part] = builder }
        }
        let halves = packed.withLock { $0 }.compactMap { $0 }
        guard var whole = halves.first else { return database.data.packedPlacemarks([], from: []) }
        for half in halves.dropFirst() { whole.append(half) }
        return whole.finish(wrapsEach: true)
    }

    private static func search(_ arguments: Arguments, in database: GeoNamesDatabase) throws(ServiceError) -> Value {
        let options = try OptionTable.check(arguments[1], searchOptions)
        let limit = options["limit"]?.integerValue.map { Int($0) } ?? 10
        let country = options["country"]?.stringValue
        guard let query = arguments[0].stringValue else {
            throw ServiceError(.invalidArgument, "the query is not UTF-8 text: pass a place name in UTF-8")
        }
        guard !query.allSatisfy(\.isWhitespace) else { throw ServiceError(.invalidArgument, "the query is empty") }
        return .array(try database.search(query, country: country, limit: limit).map(\.value))
    }
}

extension GeocoderService: DeclaredService {}
