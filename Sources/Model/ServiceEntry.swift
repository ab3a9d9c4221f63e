import Synchronization

/// One service a plugin provides: its declaration, known before the service exists, and how to
/// make it on first use.
///
/// A host documents, completes and lists a service from its entry alone (`crescent services`,
/// `help`, the REPL), and makes it only when a script first touches it; a service that cannot
/// start (a corrupt database, a device that will not open) then fails only what uses it. The
/// service is made at most once: later calls answer the same service, or the same error.
///
/// ```swift
/// ServiceEntry(Counter.declaration) { () throws(ServiceError) in Counter(step: 2) }
/// ```
public struct ServiceEntry: Sendable {
    /// The service's name (`services.<name>`).
    public let name: String
    /// A mistake found without making the service (a setting of the wrong type): the host
    /// reports it at start, and every use of the service answers it.
    public let setupError: ServiceError?
    /// True when the service runs only once started (`services.NAME:start()`, a
    /// ``StartableService``): known before it is made, so a run that only subscribed to it can
    /// be told it never started.
    public let isStartable: Bool
    private let declaration: @Sendable () -> AnyInterface
    private let made: MadeOnce

    /// The service's declaration: its name, properties, methods and events.
    public var interface: AnyInterface { declaration() }

    /// An entry whose service `make` makes on first use.
    public init(_ interface: AnyInterface, make: @escaping @Sendable () throws(ServiceError) -> any Service) {
        self.init(named: interface.name, declaration: { interface }, setupError: nil, made: MadeOnce(make))
    }

    /// An entry whose declaration is built when something first reads it (help, completion,
    /// the first call), not when the host starts: a run that never touches the service never
    /// pays for its declaration. `declaration` must declare a service called `name`.
    public init(named name: String, declaration: @escaping @Sendable () -> AnyInterface, isStartable: Bool = false,
                make: @escaping @Sendable () throws(ServiceError) -> any Service) {
        self.init(named: name, declaration: declaration, setupError: nil, made: MadeOnce(make), isStartable: isStartable)
    }

    /// An entry for a service that already exists.
    public init(made service: any Service) {
        let interface = service.interface
        self.init(named: interface.name, declaration: { interface }, setupError: nil,
                  made: MadeOnce { () throws(ServiceError) in service }, isStartable: service is any StartableService)
    }

    /// An entry whose service cannot be made because of `error`, found at setup.
    public init(_ interface: AnyInterface, failed error: ServiceError) {
        self.init(named: interface.name, declaration: { interface }, failed: error)
    }

    /// An entry whose service cannot be made because of `error`, its declaration built when
    /// first read (see ``init(named:declaration:make:)``).
    public init(named name: String, declaration: @escaping @Sendable () -> AnyInterface, failed error: ServiceError) {
        self.init(named: name, declaration: declaration, setupError: error,
                  made: MadeOnce { () throws(ServiceError) in throw error })
    }

    private init(named name: String, declaration: @escaping @Sendable () -> AnyInterface, setupError: ServiceError?,
                 made: MadeOnce, isStartable: Bool = false) {
        self.name = name
        self.declaration = declaration
        self.setupError = setupError
        self.made = made
        self.isStartable = isStartable
    }

    /// The service, made now if this is the first call.
    ///
    /// - Throws: why it cannot be made (the same error on every call).
    public func service() throws(ServiceError) -> any Service {
        try made.value()
    }

    /// The service if it has been made, without making it.
    public var madeService: (any Service)? { made.existing }
}

/// Makes a value once, from whichever thread asks first; remembers a failure too.
private final class MadeOnce: Sendable {
    /// A state of our own rather than `Result<any Service, ServiceError>?`: a generic enum's
    /// metadata is built at run time on first use, which costs a scan of every protocol
    /// conformance in the binary, and every run destroys one of these at exit.
    private enum State {
        case pending
        case made(any Service)
        case failed(ServiceError)
    }

    private let make: @Sendable () throws(ServiceError) -> any Service
    private let state = Mutex<State>(.pending)

    init(_ make: @escaping @Sendable () throws(ServiceError) -> any Service) {
        self.make = make
    }

    func value() throws(ServiceError) -> any Service {
        try state.withLock { (state: inout State) throws(ServiceError) -> any Service in
            switch state {
            case .made(let service):
                return service
            case .failed(let error):
                throw error
            case .pending:
                do throws(ServiceError) {
                    let service = try make()
                    state = .made(service)
                    return service
                } catch {
                    state = .failed(error)
                    throw error
                }
            }
        }
    }

    var existing: (any Service)? {
        state.withLock { state in
            if case .made(let service) = state { return service }
            return nil
        }
    }
}
