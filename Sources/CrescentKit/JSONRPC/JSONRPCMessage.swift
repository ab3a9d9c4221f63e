public import Model

/// One JSON-RPC 2.0 message: what process plugins and remote-control clients exchange with a
/// host, one JSON object per line (see ``JSONRPCLineDecoder``).
///
/// Parameters and results are Model values, so what crosses the wire is what crosses into Lua.
/// Batches are not part of Crescent's protocol: a line holding an array is an invalid request.
///
/// ```swift
/// let line = JSONRPCMessage.request(id: 1, method: "eval", params: ["code": "1 + 1"]).line
/// // {"id":1,"jsonrpc":"2.0","method":"eval","params":{"code":"1 + 1"}}
/// switch JSONRPCMessage.parse(line: Array(line.utf8)) { ... }
/// ```
public enum JSONRPCMessage: Sendable, Equatable {
    /// A call that expects an answer with the same id.
    case request(id: JSONRPCID, method: String, params: Value)
    /// A message that expects no answer.
    case notification(method: String, params: Value)
    /// The answer to a request.
    case response(id: JSONRPCID, result: Value)
    /// The failed answer to a request; the id is nil when the request could not be read.
    case failure(id: JSONRPCID?, error: JSONRPCError)

    /// The message as one line of JSON, without the line ending: `value`'s text (keys sorted).
    /// The messages of every call are written field by field, without building the envelope
    /// object first; a failure, rare, is `value`'s text as it is.
    public var line: String {
        var text = ""
        // Enough for the common messages (an eval's answer, an output line) to grow only once, if at all.
        text.reserveCapacity(128)
        text += "{"
        switch self {
        case .request(let id, let method, let params):
            text += "\"id\":"
            id.value.appendJSON(to: &text)
            text += ",\"jsonrpc\":\"2.0\",\"method\":"
            Value.appendJSONString(method, to: &text)
            if !params.isNull {
                text += ",\"params\":"
                params.appendJSON(to: &text)
            }
        case .notification(let method, let params):
            text += "\"jsonrpc\":\"2.0\",\"method\":"
            Value.appendJSONString(method, to: &text)
            if !params.isNull {
                text += ",\"params\":"
                params.appendJSON(to: &text)
            }
        case .response(let id, let result):
            text += "\"id\":"
            id.value.appendJSON(to: &text)
            text += ",\"jsonrpc\":\"2.0\",\"result\":"
            result.appendJSON(to: &text)
        case .failure:
            return value.jsonText
        }
        text += "}"
        return text
    }

    /// The message as a JSON object.
    public var value: Value {
        var fields: Fields = ["jsonrpc": "2.0"]
        switch self {
        case .request(let id, let method, let params):
            fields["id"] = id.value
            fields["method"] = .string(method)
            if !params.isNull { fields["params"] = params }
        case .notification(let method, let params):
            fields["method"] = .string(method)
            if !params.isNull { fields["params"] = params }
        case .response(let id, let result):
            fields["id"] = id.value
            fields["result"] = result
        case .failure(let id, let error):
            fields["id"] = id?.value ?? .null
            var body: Fields = ["code": .integer(Int64(error.code)), "message": .string(error.message)]
            if let data = error.data { body["data"] = data }
            fields["error"] = .object(body)
        }
        return .object(fields)
    }

    /// How deep a message may nest: a value at JSON's one limit (``Value/jsonMaxDepth``) inside
    /// the envelope's own levels (message, params or result, an argument list, a wrapper).
    public static let envelopeDepth = Value.jsonMaxDepth + 4

    /// The message one line holds, or the error to answer it with (a parse error, an invalid request).
    public static func parse(line: some Collection<UInt8>) -> Result<JSONRPCMessage, JSONRPCError> {
        // The common line, a call in a plain envelope, is read without decoding the envelope.
        if let call = line.withContiguousStorageIfAvailable({ JSONRPCCallScanner.call(in: $0) }), let call {
            return .success(call)
        }
        let document: Value
        do {
            document = try Value(jsonBytes: line, maxDepth: envelopeDepth)
        } catch {
            return .failure(JSONRPCError(code: JSONRPCError.parseError, message: "parse error: \(error.message)"))
        }
        return parse(document)
    }

    /// The message a decoded JSON value holds, or the error to answer it with.
    public static func parse(_ document: Value) -> Result<JSONRPCMessage, JSONRPCError> {
        guard case .object(let fields) = document else {
            return .failure(.invalidRequest("a message must be a JSON object, got \(document.typeName)"))
        }
        guard fields["jsonrpc"] == "2.0" else {
            return .failure(.invalidRequest("\"jsonrpc\" must be \"2.0\""))
        }
        let id: JSONRPCID?
        switch fields["id"] {
        case nil, .null?: id = nil
        case .integer(let number)?: id = .integer(number)
        case .string(let text)?: id = .string(text)
        case let other?: return .failure(.invalidRequest("\"id\" must be an integer or a string, got \(other.typeName)"))
        }
        if let method = fields["method"] {
            guard case .string(let name) = method else {
                return .failure(.invalidRequest("\"method\" must be a string, got \(method.typeName)", id: id))
            }
            let params = fields["params"] ?? .null
            switch params {
            case .null, .array, .object: break
            default: return .failure(.invalidRequest("\"params\" must be an array or an object, got \(params.typeName)", id: id))
            }
            guard let id else { return .success(.notification(method: name, params: params)) }
            return .success(.request(id: id, method: name, params: params))
        }
        if let error = fields["error"] {
            guard case .integer(let code) = error["code"], case .string(let message) = error["message"] else {
                return .failure(.invalidRequest("\"error\" must hold an integer \"code\" and a string \"message\"", id: id))
            }
            let data = error["data"]
            return .success(.failure(id: id, error: JSONRPCError(code: Int(clamping: code), message: message,
                                                                  data: data.isNull ? nil : data)))
        }
        guard let id else { return .failure(.invalidRequest("a message needs \"method\", or an \"id\" with \"result\" or \"error\"")) }
        guard let result = fields["result"] else {
            return .failure(.invalidRequest("a response needs \"result\" or \"error\"", id: id))
        }
        return .success(.response(id: id, result: result))
    }
}

/// A JSON-RPC request id: an integer or a string.
public enum JSONRPCID: Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    case integer(Int64)
    case string(String)

    public init(integerLiteral value: Int64) { self = .integer(value) }

    /// The id as a JSON value.
    public var value: Value {
        switch self {
        case .integer(let number): .integer(number)
        case .string(let text): .string(text)
        }
    }

    public var description: String { value.jsonText }
}
