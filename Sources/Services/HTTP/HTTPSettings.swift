import Model

/// How the http service behaves when a request does not say: the `[http]` section of
/// `crescent.toml`.
///
/// ```toml
/// [http]
/// timeout = 30                  # seconds a whole request may take (default 30)
/// max_bytes = 10485760          # the largest body accepted (default 10 MiB)
/// connections_per_host = 50     # HTTP/1.1 keep-alive connections kept per host (default 50)
/// ```
struct HTTPSettings: Sendable {
    /// Seconds a request may take, from connecting to the last byte of the body.
    var timeout: Double = 30
    /// The largest response body accepted, in bytes.
    var maxBytes: Int = 10 << 20
    /// Connections opened to one host at most (more requests wait for one to be free).
    var connectionsPerHost: Int = HTTPService.defaultConnectionsPerHost

    /// The largest `max_bytes` there is: AsyncHTTPClient collects a body in one buffer of at most
    /// 4 GiB - 1.
    static let maxBytesLimit = Int(UInt32.max)

    init() {}

    /// The settings of `section`; a bad one is an `invalid_argument` naming it.
    init(_ section: Value) throws(ServiceError) {
        if !section["timeout"].isNull {
            timeout = try Self.timeout(section["timeout"], name: "[http] timeout")
        }
        if !section["max_bytes"].isNull {
            maxBytes = try Self.maxBytes(section["max_bytes"], name: "[http] max_bytes")
        }
        let connections = section["connections_per_host"]
        if !connections.isNull {
            guard let count = connections.integerValue, (1...1000).contains(count) else {
                throw ServiceError(.invalidArgument, "[http] connections_per_host must be an integer in [1, 1000], got \(Self.describe(connections))")
            }
            connectionsPerHost = Int(count)
        }
    }

    /// A timeout in seconds: a number above zero and at most a year.
    static func timeout(_ value: Value, name: String) throws(ServiceError) -> Double {
        guard let seconds = value.doubleValue, seconds > 0, seconds <= 365 * 86_400 else {
            throw ServiceError(.invalidArgument, "\(name) must be a number of seconds above 0, got \(describe(value))")
        }
        return seconds
    }

    /// A body limit in bytes: an integer in [0, 4 GiB - 1].
    static func maxBytes(_ value: Value, name: String) throws(ServiceError) -> Int {
        guard let bytes = value.integerValue, (0...Int64(maxBytesLimit)).contains(bytes) else {
            throw ServiceError(.invalidArgument, "\(name) must be an integer number of bytes in [0, \(maxBytesLimit)], got \(describe(value))")
        }
        return Int(bytes)
    }

    /// A bad setting as the message shows it (``Value/settingText``).
    static func describe(_ value: Value) -> String { value.settingText }
}
