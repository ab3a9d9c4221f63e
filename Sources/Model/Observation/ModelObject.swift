/// Anything consumers can observe: a service, or an object a service hands out (a collection).
///
/// It declares its interface once and reports its changes through ``changes``; the host turns
/// those reports into deliveries on its loop. Implementations are thread-safe (`Sendable`): a
/// service may change its state from any task.
public protocol ModelObject: AnyObject, Sendable {
    /// What the object shows: properties, methods, events.
    var interface: AnyInterface { get }
    /// Where the object reports property changes and events.
    var changes: ChangePublisher { get }
    /// True for a service (a default each kind of object provides, below).
    var isService: Bool { get }
    /// The object as a service the host starts and stops, nil when it is not one.
    ///
    /// The host asks these rather than casting (`object is any Service`): the first cast of a
    /// type to a protocol makes the Swift runtime scan every protocol conformance in the binary,
    /// for each kind of object a script first touches.
    var asStartable: (any StartableService)? { get }
    /// The object as one its caller's owner holds (a spawned process), nil when it is not one.
    var asOwned: (any OwnedModelObject)? { get }
    /// True when what it hands out is JSON data (a store's records): a field holding null is
    /// `json.null` in Lua, as `json.decode` gives it, so keys holding null survive a round trip.
    /// Elsewhere a null field is a field left out (`nil`), as an optional field reads.
    var handsOutJSONData: Bool { get }
}

extension ModelObject {
    public var isService: Bool { false }
    public var asStartable: (any StartableService)? { nil }
    public var asOwned: (any OwnedModelObject)? { nil }
    public var handsOutJSONData: Bool { false }
}

/// A model object a method hands to its caller that works until it finishes or its caller's
/// owner ends (a spawned process): the host makes it part of that owner, as it does a request,
/// and counts it as work in progress until it finishes.
///
/// ```swift
/// d.function("spawn", [.init("argv", .table, "The program.")], returns: "a process", "Starts it.") { service, arguments throws(ServiceError) in
///     .handle(ObjectHandle(try service.spawn(arguments[0])))   // a SpawnedProcess: OwnedModelObject
/// }
/// ```
public protocol OwnedModelObject: ModelObject {
    /// The host holds the object for its caller's owner and delivers its reports from now on,
    /// so it may start. It calls `finished` once, from any thread, after its last report (or
    /// at once when it has already finished).
    func adopt(finished: @escaping @Sendable () -> Void)
    /// Its owner ended before it finished: stop for good. Idempotent.
    func ownerEnded()
    /// True while it works on its own and will report without outside help (a running program);
    /// false while it only waits for the world (a file watcher). A test runner waits for the
    /// busy ones before it moves virtual time on.
    var isBusy: Bool { get }
    /// True when it ends with the script's task that made it, not only with its owner (a
    /// spawned program, unless the script asked it to outlive the task).
    var endsWithTask: Bool { get }
    /// The task that made it ended (see ``endsWithTask``): stop, gently. Idempotent.
    func taskEnded()
}

extension OwnedModelObject {
    public var asOwned: (any OwnedModelObject)? { self }
    public var isBusy: Bool { true }
    public var endsWithTask: Bool { false }
    public func taskEnded() { ownerEnded() }
}

/// A service: a model object registered by name (`services.location`), created by a plugin.
public protocol Service: ModelObject {}

extension Service {
    public var isService: Bool { true }
}

/// A service the host starts and stops for its consumers, counting one share per owner:
/// the service runs while any owner has started it, and an owner that ends stops its share.
public protocol StartableService: Service {
    /// The active shares changed and at least one is left: start, or apply the new options
    /// (each share's options, in the order they were made).
    func startUpdates(shares: [Value])
    /// The last share ended.
    func stopUpdates()
    /// Checks the options of one `start(options)` call before it is counted, with
    /// ``OptionTable`` (an unknown key or a wrong type raises at the call); the default leaves
    /// them to ``startUpdates(shares:)``, for services whose options are not known up front.
    func checkStartOptions(_ options: Value) throws(ServiceError)
}

extension StartableService {
    public func checkStartOptions(_ options: Value) throws(ServiceError) {}
    public var asStartable: (any StartableService)? { self }
}

/// A reference to a model object that compares by identity, for use inside ``Value``.
public struct ObjectHandle: Sendable, Hashable {
    public let object: any ModelObject

    public init(_ object: any ModelObject) { self.object = object }

    public var id: ObjectIdentifier { ObjectIdentifier(object) }
    public var typeName: String { object.interface.name }

    public static func == (lhs: ObjectHandle, rhs: ObjectHandle) -> Bool { lhs.object === rhs.object }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(object)) }
}
