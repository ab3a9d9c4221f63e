/// One HTTP request, as Swift callers (the feeds service) and the Lua binding describe it.
///
/// Only `url` is required; everything else falls back to the service's settings. Header names are
/// matched case-insensitively by servers, so send them in any case.
///
/// ```swift
/// var request = HTTPRequestSpec(url: "https://example.org/feed.xml")
/// request.headers = [("If-None-Match", etag)]
/// let response = try await http.fetch(request)
/// if response.status == 304 { return }          // not modified: a normal result
/// ```
public struct HTTPRequestSpec: Sendable {
    /// `GET`, `POST`, … (an HTTP token; sent as given).
    public var method: String
    /// An absolute `http://` or `https://` URL.
    public var url: String
    /// Request headers in the order they are sent; a name may repeat.
    public var headers: [(name: String, value: String)]
    /// The request body, sent byte for byte; nil sends none.
    public var body: [UInt8]?
    /// Seconds the whole exchange (connecting, redirects, the body) may take; nil for the
    /// service's default (`[http] timeout`, 30 s).
    public var timeout: Double?
    /// The largest body accepted, in bytes; nil for the service's default (`[http] max_bytes`,
    /// 10 MiB). A larger response fails with `io` once that many bytes have arrived.
    public var maxBytes: Int?
    /// What sets `maxBytes`, as the error of a larger body names it (`[feeds] max_bytes`); nil
    /// names the http service's own (`{ maxBytes = n }`, `[http] max_bytes`).
    public var maxBytesSetting: String?

    public init(method: String = "GET", url: String, headers: [(name: String, value: String)] = [],
                body: [UInt8]? = nil, timeout: Double? = nil, maxBytes: Int? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxBytes = maxBytes
    }
}
