import Foundation
import Model

/// Where a request goes: its URL checked before anything is sent, so that a malformed URL or a
/// scheme other than http and https is an `invalid_argument` naming the URL and the fix.
///
/// A URL's user information (`http://user:password@host/`) is sent as Basic authentication
/// (``credentials``) and never shown: messages and responses name the URL as ``redacted(_:)``
/// writes it.
struct HTTPTarget: Sendable {
    /// `http` or `https`.
    let scheme: String
    /// The host as written in the URL (lower-cased).
    let host: String
    /// The port, explicit or the scheme's default.
    let port: Int
    /// The parsed URL, handed to AsyncHTTPClient as it is (parsing is a visible cost per request).
    let url: URL
    /// The user and password of the URL's user information, percent-decoded; nil without one.
    let credentials: (user: String, password: String)?

    /// What a URL without `://` lacks, worded for the URL as shown: a path alone (`/x.json`) or
    /// a host without its scheme (`127.0.0.1:8080/x`, `localhost:8080/x`, `example.org/page`),
    /// which would otherwise read as an invalid URL or as the scheme `localhost`. Nil for
    /// anything else (`mailto:x` is a scheme of its own).
    static func schemeHint(_ text: String) -> ((String) -> String)? {
        guard !text.contains("://") else { return nil }
        if text.hasPrefix("/") {
            return { "is a path, not a URL: write the whole URL, http://HOST\($0)" }
        }
        let hostPart = text.prefix { $0 != "/" && $0 != ":" && $0 != "?" }
        let rest = text.dropFirst(hostPart.count)
        let looksLikeHost = hostPart == "localhost" || (hostPart.contains(".") && !hostPart.contains(" "))
        let portFollows = rest.hasPrefix(":") && rest.dropFirst().first?.isNumber == true
        guard looksLikeHost, rest.isEmpty || rest.hasPrefix("/") || portFollows else { return nil }
        return { "has no scheme: write http://\($0) or https://\($0)" }
    }

    init(_ text: String) throws(ServiceError) {
        guard !text.isEmpty else { throw ServiceError(.invalidArgument, "the url is empty: give an http:// or https:// URL") }
        // A URL from a script or a server may be megabytes long: messages quote its start (made
        // only for a message: clipping is a visible cost per request).
        var shown: String { clipped(Self.redacted(text)) }
        // Foundation, left to encode a raw space itself, encodes every `%` too (`%2f` became
        // `%252f`): only the characters that are not valid are encoded, escapes kept.
        if let hint = Self.schemeHint(text) { throw ServiceError(.invalidArgument, "'\(shown)' \(hint(shown))") }
        let escaped = text.contains("%") ? URL(string: Self.encodingInvalidCharacters(text), encodingInvalidCharacters: false) : nil
        guard let url = URL(string: text, encodingInvalidCharacters: false) ?? escaped ?? URL(string: text) else {
            throw ServiceError(.invalidArgument, "'\(shown)' is not a valid URL (spaces and other special characters must be percent-encoded)")
        }
        guard let scheme = url.scheme?.lowercased() else {
            throw ServiceError(.invalidArgument, "'\(shown)' has no scheme: write http://\(shown) or https://\(shown)")
        }
        guard scheme == "http" || scheme == "https" else {
            // htp, htps, htttp: a letter off http(s), named as such.
            let near = scheme.hasPrefix("h") && scheme.contains("t") && scheme.hasSuffix("p") || scheme.hasSuffix("ps") && scheme.hasPrefix("h")
            let hint = near ? " (did you mean \(scheme.hasSuffix("s") ? "https" : "http")?)" : ""
            throw ServiceError(.invalidArgument, "'\(shown)' has the unsupported scheme '\(scheme)': only http and https URLs can be fetched\(hint)")
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
        if let user = url.user(percentEncoded: false) {
            credentials = (user, url.password(percentEncoded: false) ?? "")
        } else {
            credentials = nil
        }
    }

    /// `text` with every byte that may not appear in a URL percent-encoded (a space as `%20`);
    /// `%` stays when it starts an escape (two hex digits follow), else it is `%25`.
    static func encodingInvalidCharacters(_ text: String) -> String {
        let bytes = Array(text.utf8)
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=".utf8)
        func isHex(_ index: Int) -> Bool {
            index < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9") ~= bytes[index]
                || UInt8(ascii: "a")...UInt8(ascii: "f") ~= bytes[index] || UInt8(ascii: "A")...UInt8(ascii: "F") ~= bytes[index])
        }
        var encoded: [UInt8] = []
        encoded.reserveCapacity(bytes.count)
        for (index, byte) in bytes.enumerated() {
            if allowed.contains(byte) || (byte == UInt8(ascii: "%") && isHex(index + 1) && isHex(index + 2)) {
                encoded.append(byte)
            } else {
                encoded.append(contentsOf: Array(String(format: "%%%02X", byte).utf8))
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// The value of the `Authorization` header ``credentials`` ask for, or nil.
    var basicAuthorization: String? {
        credentials.map { "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString() }
    }

    /// `text` with the user information of its authority replaced by `***`
    /// (`http://***@host/path`), so that no message, log or response repeats a password. Works on
    /// any text, a URL that cannot be parsed included.
    static func redacted(_ text: String) -> String {
        let utf8 = text.utf8
        guard let separator = text.range(of: "://") else { return text }
        let authorityStart = separator.upperBound
        let authorityEnd = utf8[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? text.endIndex
        guard let at = text[authorityStart..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<authorityStart]) + "***" + String(text[at...])
    }
}
