/// Why remote control could not be set up or used: the socket folder, a name taken, a host that
/// is not there. The description says what happened and what to do.
public struct RemoteError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) { self.description = description }
}
