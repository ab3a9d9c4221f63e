import AsyncHTTPClient
import Model
import NIOCore
import NIOHTTP1
import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What AsyncHTTPClient's and NIO's errors mean to a script: a ``ServiceError`` with a stable code
/// and a message naming the URL.
enum HTTPFailure {
    /// The service error for `error`, raised by a request to `url`.
    static func serviceError(_ error: any Error, url: String, timeout: Double, limit: BodyLimit) -> ServiceError {
        if let error = error as? ServiceError { return error }
        if error is ResponseCollector.TooBig {
            return ServiceError(.io, "the response from \(url) is larger than \(limit.maxBytes) bytes: raise \(limit.setting)")
        }
        if error is CancellationError { return cancelled }
        if let error = error as? HTTPClientError { return serviceError(error, url: url, timeout: timeout) }
        if let error = error as? NIOConnectionError {
            if let dns = error.dnsAError ?? error.dnsAAAAError {
                return ServiceError(.network, "cannot resolve \(error.host) (for \(url)): \(dns)")
            }
            let reasons = error.connectionErrors.map { "\($0.target): \(describe($0.error))" }
            return ServiceError(.network, "cannot connect to \(error.host):\(error.port) (for \(url)): \(reasons.joined(separator: "; "))")
        }
        if let error = error as? ChannelError, case .connectTimeout = error {
            return ServiceError(.timeout, "connecting for \(url) took too long")
        }
        // llhttp's own words ("invalid constant string") tell a script nothing (harden4 H8).
        if let error = error as? HTTPParserError {
            return ServiceError(.network, "the server at \(url) did not answer in HTTP/1.x (its answer could not be parsed: \(error))")
        }
        return ServiceError(.network, "\(url): \(describe(error))")
    }

    /// The largest body a request accepts, and the setting that raises it, as errors name it.
    struct BodyLimit: Sendable {
        let maxBytes: Int
        let setting: String
    }

    private static let cancelled = ServiceError(.cancelled, "the request was cancelled")

    private static func serviceError(_ error: HTTPClientError, url: String, timeout: Double) -> ServiceError {
        switch error {
        case .deadlineExceeded, .readTimeout, .writeTimeout, .getConnectionFromPoolTimeout:
            return ServiceError(.timeout, "\(url) did not answer within \(formatSeconds(timeout)) s")
        case .connectTimeout, .tlsHandshakeTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
            return ServiceError(.timeout, "connecting for \(url) took too long (\(error))")
        case .cancelled:
            return cancelled
        case .redirectCycleDetected:
            return ServiceError(.network, "\(url) redirects in a loop")
        case .redirectLimitReached:
            return ServiceError(.network, "\(url) redirects more than 10 times")
        case .alreadyShutdown:
            return ServiceError(.unavailable, "the http service has shut down")
        case .remoteConnectionClosed:
            return ServiceError(.network, "the server closed the connection before answering \(url)")
        case .invalidURL, .emptyHost, .emptyScheme:
            return ServiceError(.invalidArgument, "'\(url)' cannot be fetched: \(error)")
        default:
            return ServiceError(.network, "\(url): \(error)")
        }
    }

    /// `connection refused` for a socket error, else the error's own description.
    private static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return String(describing: error)
    }

    /// `30`, `0.25`: seconds without a useless `.0`.
    private static func formatSeconds(_ seconds: Double) -> String {
        seconds == seconds.rounded() && seconds < 1e15 ? String(Int64(seconds)) : String(seconds)
    }
}
