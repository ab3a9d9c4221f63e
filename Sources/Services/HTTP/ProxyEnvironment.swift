import AsyncHTTPClient
import Model
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The proxies that `http_proxy`, `https_proxy` and `no_proxy` ask for, read as curl reads them.
///
/// - `http_proxy` serves `http://` URLs and `https_proxy` serves `https://` URLs; the
///   lower-case name wins over the upper-case one. AsyncHTTPClient reaches both through a
///   CONNECT tunnel (so an HTTP proxy must allow CONNECT to port 80 too). A value is
///   `[http://][user:password@]host[:port]` (port 1080 when left out, as in curl) or
///   `socks5://host[:port]`.
/// - `no_proxy` is a comma-separated list of host names, domains (`example.org` also covers
///   `www.example.org`; a leading dot is allowed), addresses, each with an optional `:port`,
///   or `*` for every host. It is matched against each request's host, so one run can reach some
///   hosts through the proxy and others directly.
///
/// A malformed proxy setting does not stop the host: the requests that would use it fail with
/// `invalid_argument` naming the variable.
struct ProxyEnvironment: Sendable {
    typealias Proxy = HTTPClient.Configuration.Proxy

    /// The variables it reads, lower-case first.
    static let variableNames = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"]

    private let httpProxy: Result<Proxy, ServiceError>?
    private let httpsProxy: Result<Proxy, ServiceError>?
    private let exceptions: [Exception]

    /// One `no_proxy` entry.
    private struct Exception: Sendable {
        /// A lower-cased host or domain without a leading dot; nil for `*`.
        let domain: String?
        let port: Int?

        func matches(host: String, port requestPort: Int) -> Bool {
            if let port, port != requestPort { return false }
            guard let domain else { return true }
            return host == domain || host.hasSuffix("." + domain)
        }
    }

    /// The settings in `environment` (variable name to value).
    init(environment: [String: String]) {
        func variable(_ name: String) -> (name: String, value: String)? {
            for candidate in [name, name.uppercased()] {
                if let value = environment[candidate], !value.isEmpty { return (candidate, value) }
            }
            return nil
        }
        httpProxy = variable("http_proxy").map { Self.parseProxy($0.value, variable: $0.name) }
        httpsProxy = variable("https_proxy").map { Self.parseProxy($0.value, variable: $0.name) }
        exceptions = variable("no_proxy").map { Self.parseExceptions($0.value) } ?? []
    }

    /// The proxy variables of this process.
    static func current() -> [String: String] {
        var environment: [String: String] = [:]
        for name in variableNames {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }

    /// The proxy for a request to `host`:`port` over `scheme` (`http` or `https`), nil to connect
    /// directly.
    func proxy(scheme: String, host: String, port: Int) throws(ServiceError) -> Proxy? {
        guard let setting = scheme == "https" ? httpsProxy : httpProxy else { return nil }
        let host = Self.bareHost(host.lowercased())
        if exceptions.contains(where: { $0.matches(host: host, port: port) }) { return nil }
        return try setting.get()
    }

    // MARK: Parsing

    /// `[scheme://][user:password@]host[:port][/]` as a proxy.
    private static func parseProxy(_ text: String, variable: String) -> Result<Proxy, ServiceError> {
        func failure(_ why: String) -> Result<Proxy, ServiceError> {
            .failure(ServiceError(.invalidArgument, "\(variable)='\(text)' \(why): write [http://][user:password@]host[:port] or socks5://host[:port]"))
        }
        var rest = Substring(text.trimmingSpaces)
        var isSOCKS = false
        if let separator = rest.firstRange(of: "://") {
            let scheme = rest[..<separator.lowerBound].lowercased()
            switch scheme {
            case "http": break
            case "socks5", "socks5h": isSOCKS = true
            default: return failure("has the unsupported scheme '\(scheme)'")
            }
            rest = rest[separator.upperBound...]
        }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        var authorization: HTTPClient.Authorization?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            authorization = .basic(username: percentDecoded(parts[0]), password: parts.count > 1 ? percentDecoded(parts[1]) : "")
        }
        guard let (host, port) = splitHostPort(rest) else { return failure("is not a proxy address") }
        if isSOCKS {
            guard authorization == nil else { return failure("has credentials, which SOCKS proxies do not take here") }
            return .success(.socksServer(host: host, port: port ?? 1080))
        }
        return .success(.server(host: host, port: port ?? 1080, authorization: authorization))
    }

    private static func parseExceptions(_ text: String) -> [Exception] {
        text.split(whereSeparator: { $0 == "," || $0 == " " }).compactMap { entry in
            if entry == "*" { return Exception(domain: nil, port: nil) }
            var name = entry.lowercased()[...]
            while name.first == "." { name = name.dropFirst() }
            guard let (host, port) = splitHostPort(name) else { return nil }
            return Exception(domain: host, port: port)
        }
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`; nil when the host is empty or the port is not a
    /// number in [1, 65535].
    private static func splitHostPort(_ text: Substring) -> (host: String, port: Int?)? {
        var host = text
        var portText: Substring?
        if text.first == "[" {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if after.first == ":" { portText = after.dropFirst() } else if !after.isEmpty { return nil }
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty else { return nil }
        guard let portText else { return (String(host), nil) }
        guard let port = Int(portText), (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }

    /// A host without the brackets of an IPv6 literal.
    private static func bareHost(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// `%40` as `@`: user names and passwords in proxy URLs are percent-encoded.
    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
               let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
