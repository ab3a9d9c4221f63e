public import Model

/// What a caller of the `process` and `files` services may reach: the one place where a
/// plugin's permissions (`exec`, `read`, `write` in its manifest) are checked before a program
/// starts or a path is touched.
///
/// The host's own scripts get ``unrestricted``. A plugin's services are to be made with an
/// access built from its grants, whose checks throw `permission` naming the permission and the
/// plugin; the services call these checks and nothing else decides.
public struct ServiceAccess: Sendable {
    /// Throws unless the caller may run `program` (as given: a name looked up in PATH, or a path).
    public let checkRun: @Sendable (_ program: String) throws(ServiceError) -> Void
    /// Throws unless the caller may read `path`.
    public let checkRead: @Sendable (_ path: String) throws(ServiceError) -> Void
    /// Throws unless the caller may write `path`.
    public let checkWrite: @Sendable (_ path: String) throws(ServiceError) -> Void

    public init(checkRun: @escaping @Sendable (String) throws(ServiceError) -> Void,
                checkRead: @escaping @Sendable (String) throws(ServiceError) -> Void,
                checkWrite: @escaping @Sendable (String) throws(ServiceError) -> Void) {
        self.checkRun = checkRun
        self.checkRead = checkRead
        self.checkWrite = checkWrite
    }

    /// Everything allowed: the host's own scripts.
    public static let unrestricted = ServiceAccess(checkRun: { _ in }, checkRead: { _ in }, checkWrite: { _ in })
}
