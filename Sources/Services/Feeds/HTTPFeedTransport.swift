public import Model

/// Fetches feeds through the `http` service's Swift API (AsyncHTTPClient: HTTPS, redirects,
/// proxies from the environment, the body limit as bytes arrive).
public struct HTTPFeedTransport: FeedTransport {
    private let http: HTTPService

    /// A transport over `http`.
    public init(http: HTTPService) {
        self.http = http
    }

    public func fetch(_ request: FeedRequest) async throws(ServiceError) -> FeedResponse {
        var spec = HTTPRequestSpec(url: request.url, headers: request.headers, timeout: request.timeout, maxBytes: request.maxBytes)
        spec.maxBytesSetting = "[feeds] max_bytes"
        let response = try await http.fetch(spec)
        return FeedResponse(status: response.status, headers: response.headers, body: response.body)
    }
}
