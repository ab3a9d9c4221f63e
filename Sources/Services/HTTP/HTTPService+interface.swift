import Model

extension HTTPService: DeclaredService {
    /// `{ url=, method, headers, body, timeout, maxBytes }`: what `request` takes.
    static let requestType = ArgumentType.record("request", fields: [.init("url", .string)])

    static let serviceName = "http"

    static let declaration: AnyInterface = Interface<HTTPService>(
        name: serviceName,
        summary: "HTTP and HTTPS requests: redirects followed, keep-alive, timeouts, size limits and proxies from the environment."
    ) { d in
        d.method(
            "get",
            [
                .init("url", .string, "An http:// or https:// URL."),
                .init("options", .table, "{ headers = { name = value }, timeout = seconds (default 30), maxBytes = n (default 10 MiB) }.",
                      optional: true, options: getOptions),
            ],
            returns: responseDescription,
            "Fetches a URL with GET."
        ) { http, arguments, reply in
            http.startForScript({ () throws(ServiceError) in
                try HTTPRequestSpec(url: try url(arguments[0]), options: arguments[1], allowed: getOptions)
            }, reply)
        }
        d.method(
            "request",
            [
                .init("request", requestType,
                      "{ url, method = \"GET\", headers = { name = value }, body = string, timeout = seconds, maxBytes = n }.",
                      options: requestOptions),
            ],
            returns: responseDescription,
            "Sends a request with any method, headers and body."
        ) { http, arguments, reply in
            http.startForScript({ () throws(ServiceError) in
                try HTTPRequestSpec(url: try url(arguments[0]["url"]), options: arguments[0], allowed: requestOptions)
            }, reply)
        }
    }.erased

    private static let responseDescription =
        "a response { status, headers (lower-case names), body (the bytes, as a string), url (after redirects) }; any status is a result; response:json() decodes the body"

    /// The options of `get`, and of `request` (which names its URL among them).
    /// Each value's type is checked by ``HTTPRequestSpec/init(url:options:allowed:)``, with what it means.
    private static let getOptions: [OptionTable.Option] = [.any("headers"), .any("timeout"), .any("maxBytes")]
    private static let requestOptions: [OptionTable.Option] = getOptions + [.any("url"), .any("method"), .any("body")]

    /// Starts the request `make` describes, answering `reply` with the response as scripts see
    /// it (an invalid request is answered the same way); cancelling the call cancels the request.
    private func startForScript(_ make: () throws(ServiceError) -> HTTPRequestSpec, _ reply: Reply) {
        do throws(ServiceError) {
            if let cancel = start(try make(), completion: { result in reply(result.map(\.value)) }) {
                reply.onCancel(cancel)
            }
        } catch {
            reply(.failure(error))
        }
    }

    /// The methods of RFC 9110 and PATCH, as a misspelled method names them.
    static let standardMethods = ["CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"]

    /// Refuses a method a few edits from a standard one (`GTE`, `POTS`), which a server answers
    /// 501 or 405 as if the request were wrong; a method of its own (`PROPFIND`, `PURGE`) is
    /// sent as given, as fake.http's routes accept only the standard ones.
    static func checkSpelling(method: String) throws(ServiceError) {
        let upper = method.uppercased()
        guard !standardMethods.contains(upper),
              let closest = NameSuggestion.closest(to: upper, among: standardMethods, prefixes: false) else { return }
        throw ServiceError(.invalidArgument, "method '\(clipped(method, limit: 40))' is not an HTTP method ("
                           + NameSuggestion.listing("methods", standardMethods, suggesting: closest) + ")")
    }

    private static func url(_ value: Value) throws(ServiceError) -> String {
        guard let text = value.stringValue else { throw ServiceError(.invalidArgument, "the url is not valid UTF-8 text") }
        return text
    }
}

extension HTTPRequestSpec {
    /// A request from a script's options table; an unknown or ill-typed option is an
    /// `invalid_argument` naming it.
    init(url: String, options: Value, allowed: [OptionTable.Option]) throws(ServiceError) {
        self.init(url: url)
        // Each value's type is checked below, with what it means.
        let fields = try OptionTable.check(options, allowed)
        switch fields["method"] ?? .null {
        case .null: break
        case .string(let name):
            try HTTPService.checkSpelling(method: name)
            method = name
        case let other: throw ServiceError(.invalidArgument, "method must be a string such as \"POST\", got \(other.typeName)")
        }
        headers = try Self.headers(fields["headers"] ?? .null)
        switch fields["body"] ?? .null {
        case .null: break
        case .string(let text): body = Array(text.utf8)
        case .bytes(let bytes): body = bytes
        case let other: throw ServiceError(.invalidArgument, "body must be a string, got \(other.typeName) (json.encode(t) makes one from a table)")
        }
        if let seconds = fields["timeout"], !seconds.isNull {
            timeout = try HTTPSettings.timeout(seconds, name: "timeout")
        }
        if let bytes = fields["maxBytes"], !bytes.isNull {
            maxBytes = try HTTPSettings.maxBytes(bytes, name: "maxBytes")
        }
    }

    /// `{ Accept = "text/html", ["X-Tag"] = { "a", "b" } }`: a name with an array of values is
    /// sent once per value. Names are sent in sorted order, so a request is reproducible.
    private static func headers(_ value: Value) throws(ServiceError) -> [(name: String, value: String)] {
        let fields: Fields
        switch value {
        case .null, .array([]): return []
        case .object(let named): fields = named
        default: throw ServiceError(.invalidArgument, "headers must be a table of name = value, got \(value.typeName)")
        }
        var headers: [(name: String, value: String)] = []
        for name in fields.keys.sorted() {
            let field = fields[name] ?? .null
            for item in field.arrayValue ?? [field] {
                switch item {
                case .string(let text): headers.append((name, text))
                case .integer(let integer): headers.append((name, String(integer)))
                default: throw ServiceError(.invalidArgument, "header '\(name)' must be a string, got \(item.typeName)")
                }
            }
        }
        return headers
    }
}
