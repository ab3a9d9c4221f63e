public import Model

/// The error of a failed JSON-RPC call: a code, a message and optional data.
///
/// An error a service reports travels with code ``serviceFailure`` and `data.code` set to the
/// service error's code (`not_found`, `timeout` …), so the peer rebuilds the same
/// ``ServiceError`` on its side (``serviceError``).
public struct JSONRPCError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int
    public let message: String
    public let data: Value?
    /// The id of the request this error answers, when it could be read.
    public let id: JSONRPCID?

    public init(code: Int, message: String, data: Value? = nil, id: JSONRPCID? = nil) {
        self.code = code
        self.message = message
        self.data = data
        self.id = id
    }

    /// The line could not be read as JSON.
    public static let parseError = -32700
    /// The JSON is not a JSON-RPC message.
    public static let invalidRequestCode = -32600
    /// The method does not exist.
    public static let methodNotFoundCode = -32601
    /// The params do not fit the method.
    public static let invalidParamsCode = -32602
    /// The peer failed while handling the call.
    public static let internalErrorCode = -32603
    /// A service error; `data.code` holds its code.
    public static let serviceFailure = -32000

    public static func invalidRequest(_ message: String, id: JSONRPCID? = nil) -> JSONRPCError {
        JSONRPCError(code: invalidRequestCode, message: "invalid request: \(message)", id: id)
    }

    public static func methodNotFound(_ method: String, known: [String], id: JSONRPCID? = nil) -> JSONRPCError {
        let closest = NameSuggestion.closest(to: method, among: known)
        return JSONRPCError(code: methodNotFoundCode, message: "no method '\(method)' (\(NameSuggestion.listing("methods", known, suggesting: closest)))", id: id)
    }

    public static func invalidParams(_ message: String, id: JSONRPCID? = nil) -> JSONRPCError {
        JSONRPCError(code: invalidParamsCode, message: "invalid params: \(message)", id: id)
    }

    /// A service error as a JSON-RPC error: `data` carries its code, service and method.
    public init(_ error: ServiceError, id: JSONRPCID? = nil) {
        var data: Fields = ["code": .string(error.code.name)]
        if !error.service.isEmpty { data["service"] = .string(error.service) }
        if !error.method.isEmpty { data["method"] = .string(error.method) }
        self.init(code: Self.serviceFailure, message: error.message, data: .object(data), id: id)
    }

    /// The service error this JSON-RPC error stands for: its `data.code` when that is a known code,
    /// `internal` otherwise (a peer's own failure).
    public var serviceError: ServiceError {
        let code = data?["code"].stringValue.flatMap(ServiceError.Code.init(name:)) ?? .internal
        return ServiceError(code, message, service: data?["service"].stringValue ?? "", method: data?["method"].stringValue ?? "")
    }

    /// The message that answers the request this error belongs to.
    public var reply: JSONRPCMessage { .failure(id: id, error: self) }

    public var description: String { "\(message) (JSON-RPC error \(code))" }
}
