import Foundation
import Model

/// Where a request goes: its URL checked before anything is sent, so that a malformed URL or a
/// scheme other than http and https is an `invalid_argument` naming the URL and the fix.
struct HTTPTarget: Sendable {
    /// `http` or `https`.
    let scheme: String
    /// The host as written in the URL (lower-cased).
    let host: String
    /// The port, explicit or the scheme's default.
    let port: Int
    /// The parsed URL, handed to AsyncHTTPClient as it is (parsing is a visible cost per request).
    let url: URL

    init(_ text: String) throws(ServiceError) {
        guard !text.isEmpty else { throw ServiceError(.invalidArgument, "the url is empty: give an http:// or https:// URL") }
        // A URL from a script or a server may be megabytes long: messages quote its start (made
        // only for a message: clipping is a visible cost per request).
        var shown: String { clipped(text) }
        guard let url = URL(string: text) else {
            throw ServiceError(.invalidArgument, "'\(shown)' is not a valid URL (spaces and other special characters must be percent-encoded)")
        }
        guard let scheme = url.scheme?.lowercased() else {
            throw ServiceError(.invalidArgument, "'\(shown)' has no scheme: write http://\(shown) or https://\(shown)")
        }
        guard scheme == "http" || scheme == "https" else {
            throw ServiceError(.invalidArgument, "'\(shown)' has the unsupported scheme '\(scheme)': only http and https URLs can be fetched")
        }
        guard let host = url.host, !host.isEmpty else {
            throw ServiceError(.invalidArgument, "'\(shown)' has no host: write \(scheme)://HOST/PATH")
        }
        // A port past 65535 must be refused here: NIO traps converting it to 16 bits.
        if let port = url.port, !(1...65_535).contains(port) {
            throw ServiceError(.invalidArgument, "'\(shown)' has the port \(port), outside 1 to 65535")
        }
        self.url = url
        self.scheme = scheme
        self.host = host.lowercased()
        port = url.port ?? (scheme == "https" ? 443 : 80)
    }
}
