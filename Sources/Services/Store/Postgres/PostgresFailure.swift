import Model
import NIOCore
import NIOPosix
import PostgresNIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns PostgresNIO's errors into ``ServiceError``s that name the database and the place and
/// say what to do, built only from the URL without its password and the server's own words.
struct PostgresFailure {
    let url: PostgresURL

    /// `database "notes" at 127.0.0.1:5432 (postgres://me@127.0.0.1:5432/notes)`.
    var target: String { "the store database \"\(url.database)\" at \(url.place) (\(url))" }

    /// Whether `error` means the connection is gone (so the link must be made again).
    static func isConnectionLoss(_ error: any Error) -> Bool {
        switch error {
        case let error as PSQLError:
            switch error.code {
            case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown: return true
            case .server: return error.serverInfo?[.sqlState]?.hasPrefix("57P") ?? false   // admin shutdown and the like
            default: return false
            }
        // A prepared statement's errors come in PostgresNIO's older type; it closes the connection
        // after a protocol error (an unclean shutdown among them).
        case let error as PostgresError:
            switch error {
            case .connectionClosed, .protocol: return true
            case .server(let message): return message.fields[.sqlState]?.hasPrefix("57P") ?? false
            }
        default:
            return error is ChannelError || error is IOError
        }
    }

    /// The error a failed connection attempt answers.
    func connecting(_ error: any Error) -> ServiceError {
        if let error = error as? PSQLError, error.code == .server, let info = error.serverInfo {
            let message = info[.message] ?? "refused"
            switch info[.sqlState] ?? "" {
            case "28P01", "28000":
                return ServiceError(.permission, "\(target) refused user '\(url.user)': \(message); check the user and password in [store] url or CRESCENT_STORE_URL")
            case "3D000":
                return ServiceError(.notFound, "\(target) does not exist: \(message); create it (createdb \(url.database)) or fix [store] url")
            default:
                return ServiceError(.unavailable, "cannot connect to \(target): \(message)")
            }
        }
        if let error = error as? PSQLError, error.code == .authMechanismRequiresPassword {
            return ServiceError(.permission, "\(target) asks for a password: add it to [store] url (postgres://user:password@host/db)")
        }
        if let error = error as? PSQLError, error.code == .sslUnsupported {
            return ServiceError(.unavailable, "\(target) does not offer TLS, which sslmode=\(url.tlsMode.rawValue) requires")
        }
        return ServiceError(.unavailable, "cannot reach \(target): \(Self.reason(error)) (is PostgreSQL running there?)")
    }

    /// The error a failed statement answers (`doing` says what it was for).
    func running(_ error: any Error, doing: String) -> ServiceError {
        if Self.isConnectionLoss(error) {
            return ServiceError(.unavailable, "lost the connection to \(target) while \(doing) (reconnecting): \(Self.reason(error))")
        }
        return ServiceError(.io, "\(target) failed while \(doing): \(Self.reason(error))")
    }

    /// A short reason, never with a password: the server's message, the system's error text, or
    /// the error's kind.
    static func reason(_ error: any Error) -> String {
        switch error {
        case let error as PSQLError:
            if let message = error.serverInfo?[.message] {
                return message + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
            }
            if let underlying = error.underlying { return reason(underlying) }
            return "\(error.code)"
        case let error as PostgresError:
            guard case .server(let message) = error, let text = message.fields[.message] else { return "\(error)" }
            return text + (message.fields[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return reason(first.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "no address found for \(error.host)" }
            return "could not connect"
        case let error as IOError:
            guard let text = strerror(error.errnoCode) else { return "error \(error.errnoCode)" }
            return String(cString: text).lowercased()
        case let error as ChannelError:
            if case .connectTimeout = error { return "timed out connecting" }
            return "\(error)"
        default:
            return "\(error)"
        }
    }
}
