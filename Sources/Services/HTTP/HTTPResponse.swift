public import Model

/// A complete HTTP response: any status (a 404 or a 304 is a result, not an error), its headers
/// and its whole body.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code of the last response, after redirects.
    public let status: Int
    /// Header names lower-cased; a header sent several times has its values joined with `", "`.
    public let headers: [String: String]
    /// The body, byte for byte (not decoded, not decompressed).
    public let body: [UInt8]
    /// The URL that answered: the request's, or the last redirect's.
    public let url: String

    public init(status: Int, headers: [String: String], body: [UInt8], url: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// The header `name`, in any case (`response.header("ETag")`).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// Joins repeated headers, lower-casing names: the one form headers take in a response.
    public static func joinedHeaders(_ pairs: some Sequence<(name: String, value: String)>) -> [String: String] {
        // Sized once: growing from empty rehashed every header again and cost more than the
        // rest of turning a small response into a value.
        var joined = [String: String](minimumCapacity: pairs.underestimatedCount)
        for (name, value) in pairs {
            let key = name.lowercased()
            if let index = joined.index(forKey: key) {
                joined.values[index] += ", " + value
            } else {
                joined[key] = value
            }
        }
        return joined
    }

    /// The type name scripts see (`response`); the host gives it a `json()` method.
    public static let typeName = "response"

    /// What scripts receive: a read-only `response { status, headers, body, url }` whose body is a
    /// Lua string holding exactly the bytes received.
    public var value: Value {
        .model(DataModel(Self.schema, [
            .integer(Int64(status)),
            .object(Fields(distinctFields: headers.map { ($0.key, .string($0.value)) })),
            .bytes(body),
            .string(url),
        ]))
    }

    /// The fields of ``value``'s data model, declared once (a misspelled read names them).
    static let schema = ModelSchema(typeName, ["status", "headers", "body", "url"])
}
