import Model

/// A standard service whose name is known without building its declaration: its entry builds
/// the declaration only when something first reads it (help, completion, the first call), so a
/// run that never touches the service never pays for it.
protocol DeclaredService: Service {
    /// The name scripts use (`services.<name>`), the same as ``declaration``'s.
    static var serviceName: String { get }
    /// What scripts see of the service.
    static var declaration: AnyInterface { get }
    /// Whether the host starts and stops it for its consumers (``StartableService``). Answered
    /// by the conformance rather than by a cast (`S.self is any StartableService.Type`): the
    /// first cast of each type makes the Swift runtime scan every protocol conformance in the
    /// binary, which every run paid once per standard service at start.
    static var isStartable: Bool { get }
}

extension DeclaredService {
    static var isStartable: Bool { false }
}

extension DeclaredService where Self: StartableService {
    static var isStartable: Bool { true }
}

extension ServiceEntry {
    /// An entry for `service` that makes it with `make` on first use.
    init<S: DeclaredService>(_ service: S.Type, make: @escaping @Sendable () throws(ServiceError) -> any Service) {
        self.init(named: S.serviceName, declaration: { S.declaration }, isStartable: S.isStartable, make: make)
    }

    /// An entry for `service`, which cannot be made because of `error`, found at setup.
    init<S: DeclaredService>(_ service: S.Type, failed error: ServiceError) {
        self.init(named: S.serviceName, declaration: { S.declaration }, failed: error)
    }
}
