import Model

/// Where a PostgreSQL store lives, from `[store] url` or `CRESCENT_STORE_URL`:
/// `postgres://user:password@host:port/database?sslmode=require`.
///
/// A host that starts with `/` (written `%2Fdir` in the host part, or `?host=/dir`) is a folder
/// holding the server's Unix socket, as libpq reads it. ``description`` is the URL without its
/// password: the only form that goes into messages.
struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    /// libpq's `sslmode`: whether to ask for TLS, and whether to check the server's certificate.
    enum TLSMode: String, Sendable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    var user: String
    var password: String?
    /// A host name or address, or a folder with the server's socket.
    var host: String
    var port: Int
    var database: String
    var tlsMode: TLSMode = .prefer

    /// The path of the server's socket when ``host`` is a folder.
    var socketPath: String? {
        host.hasPrefix("/") ? host + (host.hasSuffix("/") ? "" : "/") + ".s.PGSQL.\(port)" : nil
    }

    /// `host:port`, or the socket's folder.
    var place: String { host.hasPrefix("/") ? "socket \(socketPath ?? host)" : "\(host):\(port)" }

    /// The URL without the password.
    var description: String {
        var text = "postgres://\(Self.encode(user))@"
        if socketPath == nil { text += (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
        text += "/" + Self.encode(database)
        var query: [String] = []
        if socketPath != nil { query.append("host=\(host)") }
        if tlsMode != .prefer { query.append("sslmode=\(tlsMode.rawValue)") }
        return query.isEmpty ? text : text + "?" + query.joined(separator: "&")
    }

    /// Whether `text` names a PostgreSQL database rather than an SQLite file.
    static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses `text`; an error says what is wrong with it, never repeating a password.
    init(_ text: String, defaultUser: String = "postgres") throws(ServiceError) {
        guard Self.isPostgres(text) else { throw Self.invalid("it must start with postgres://") }
        var rest = text.hasPrefix("postgres://") ? text.dropFirst("postgres://".count) : text.dropFirst("postgresql://".count)
        try Self.refuseUnencodedUserinfo(rest)
        var parameters: [(String, String)] = []
        if let question = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: question)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                parameters.append((String(parts[0]), try Self.decode(parts.count > 1 ? parts[1] : "")))
            }
            rest = rest[..<question]
        }
        var path = Substring("")
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        user = defaultUser
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                user = try Self.decode(credentials[..<colon])
                password = try Self.decode(credentials[credentials.index(after: colon)...])
            } else {
                user = try Self.decode(credentials)
            }
        }
        host = "localhost"
        port = 5432
        var hostPart = rest
        if hostPart.hasPrefix("["), let close = hostPart.firstIndex(of: "]") {
            host = String(hostPart[hostPart.index(after: hostPart.startIndex)..<close])
            hostPart = hostPart[hostPart.index(after: close)...]
            if hostPart.hasPrefix(":") { port = try Self.port(hostPart.dropFirst()) }
        } else if let colon = hostPart.lastIndex(of: ":") {
            port = try Self.port(hostPart[hostPart.index(after: colon)...])
            hostPart = hostPart[..<colon]
            if !hostPart.isEmpty { host = try Self.decode(hostPart) }
        } else if !hostPart.isEmpty {
            host = try Self.decode(hostPart)
        }
        database = path.isEmpty ? user : try Self.decode(path)
        for (key, value) in parameters {
            switch key {
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw Self.invalid("sslmode must be disable, allow, prefer, require, verify-ca or verify-full, got \"\(value)\"")
                }
                tlsMode = mode
            case "host": host = value
            case "port": port = try Self.port(Substring(value))
            case "user": user = value
            case "password": password = value
            case "dbname": database = value
            default: throw Self.invalid("unknown parameter '\(key)' (known: sslmode, host, port, user, password, dbname)")
            }
        }
        guard !host.isEmpty else { throw Self.invalid("the host is empty") }
        guard !database.isEmpty else { throw Self.invalid("the database name is empty") }
    }

    /// Refuses a URL whose user or password holds a `/`, `?` or `#` that is not percent-encoded:
    /// the URL's parts would be cut inside the password, and those pieces shown in messages and
    /// in `store.path`. That is the case when an `@` follows the first `/`, `?` or `#` and is not
    /// inside the value of one of the URL's own parameters (`?user=me@corp`). The message repeats
    /// nothing of the URL.
    private static func refuseUnencodedUserinfo(_ rest: Substring) throws(ServiceError) {
        guard let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }),
              let at = rest[end...].lastIndex(of: "@") else { return }
        let parameter = rest[..<at].lastIndex(where: { $0 == "?" || $0 == "&" }).map { rest[rest.index(after: $0)..<at] }
        let known = ["sslmode", "host", "port", "user", "password", "dbname"]
        if let parameter, let equals = parameter.firstIndex(of: "="), known.contains(String(parameter[..<equals])) { return }
        throw invalid("its user or password has a '/', '?', '#' or '@' that is not percent-encoded: write them as %2F, %3F, %23 and %40 (the password is not shown)")
    }

    private static func port(_ text: Substring) throws(ServiceError) -> Int {
        guard let number = Int(text), (1...65535).contains(number) else {
            throw invalid("the port must be a number in 1-65535, got \"\(text)\"")
        }
        return number
    }

    private static func invalid(_ reason: String) -> ServiceError {
        ServiceError(.invalidArgument, "[store] url is not a PostgreSQL URL (postgres://user:password@host:port/database): \(reason)")
    }

    /// Undoes %XX escapes.
    private static func decode(_ text: Substring) throws(ServiceError) -> String {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let high = utf8.index(after: index)
                guard high < utf8.endIndex, utf8.index(after: high) < utf8.endIndex,
                      let value = UInt8(String(decoding: [utf8[high], utf8[utf8.index(after: high)]], as: UTF8.self), radix: 16) else {
                    throw invalid("a % escape must be followed by two hex digits")
                }
                bytes.append(value)
                index = utf8.index(high, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Escapes what would end a URL part.
    private static func encode(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if byte == UInt8(ascii: "%") || byte == UInt8(ascii: "@") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ":")
                || byte == UInt8(ascii: "?") || byte < 0x21 || byte >= 0x7F {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            } else {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return result
    }
}
