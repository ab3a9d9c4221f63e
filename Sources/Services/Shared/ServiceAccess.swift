public import Model

/// What a caller of the `process` and `files` services may reach: the one place where a
/// plugin's permissions (`exec`, `read`, `write` in its manifest) are checked before a program
/// starts or a path is touched.
///
/// The host's own scripts get ``unrestricted``. A plugin's services are made with an access
/// built from its grants (``ProcessService/restricted(to:)``, ``FilesService/restricted(to:)``),
/// whose checks throw `permission` naming the permission and the plugin; the services call these
/// checks and nothing else decides. A check answers what the service then uses, so that what was
/// checked is what is reached: the path resolved (links and `..` followed, a relative path taken
/// from the plugin's folder), the program's file found.
public struct ServiceAccess: Sendable {
    /// How a path is to be reached.
    public enum PathUse: Sendable {
        /// Read (`read`, `list`, `watch`): the path and what its links lead to.
        case read
        /// Written (`write`), through its links.
        case write
        /// Described itself (`stat`): a link is the link, not what it leads to.
        case entry
    }

    /// The spec to run for `spec` (its program's file set in ``ProcessSpec/programFile``), or
    /// `permission` when the caller may not run it.
    public let checkRun: @Sendable (_ spec: ProcessSpec) throws(ServiceError) -> ProcessSpec
    /// The path (bytes) to reach for `path` used as `use`, or `permission` when the caller may not.
    public let checkPath: @Sendable (_ path: [UInt8], _ use: PathUse) throws(ServiceError) -> [UInt8]

    public init(checkRun: @escaping @Sendable (ProcessSpec) throws(ServiceError) -> ProcessSpec,
                checkPath: @escaping @Sendable ([UInt8], PathUse) throws(ServiceError) -> [UInt8]) {
        self.checkRun = checkRun
        self.checkPath = checkPath
    }

    /// Everything allowed, as given: the host's own scripts.
    public static let unrestricted = ServiceAccess(checkRun: { $0 }, checkPath: { path, _ in path })
}
