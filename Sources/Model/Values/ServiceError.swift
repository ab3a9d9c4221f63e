/// An error a service reports, with a stable code scripts can test (`err.code == "not_found"`).
///
/// Codes are a struct over a private enum so new ones can be added without breaking anyone.
///
/// ```swift
/// throw ServiceError(.invalidArgument, "latitude 123 is outside [-90, 90]")
/// ```
public struct ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable error code, spelled in Lua as `invalid_argument`, `not_found`, ….
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, CaseIterable {
            case invalidArgument = "invalid_argument"
            case invalidData = "invalid_data"
            case notFound = "not_found"
            case timeout
            case cancelled
            case unavailable
            case io
            case network
            case permission
            case conflict
            case `internal`
        }
        private let value: Value

        public static let invalidArgument = Code(value: .invalidArgument)
        public static let invalidData = Code(value: .invalidData)
        public static let notFound = Code(value: .notFound)
        public static let timeout = Code(value: .timeout)
        public static let cancelled = Code(value: .cancelled)
        public static let unavailable = Code(value: .unavailable)
        public static let io = Code(value: .io)
        public static let network = Code(value: .network)
        public static let permission = Code(value: .permission)
        /// Someone else changed the thing first (a concurrent update of one record).
        public static let conflict = Code(value: .conflict)
        public static let `internal` = Code(value: .internal)

        /// Every code, in declaration order.
        public static let all: [Code] = Value.allCases.map { Code(value: $0) }

        /// The code named by its Lua spelling, e.g. `"not_found"`.
        public init?(name: String) {
            guard let value = Value(rawValue: name) else { return nil }
            self.value = value
        }
        private init(value: Value) { self.value = value }

        /// The Lua spelling.
        public var name: String { value.rawValue }
        public var description: String { value.rawValue }
    }

    public var code: Code
    public var message: String
    /// The service that reported it (`geocoder`), filled in by the registry when empty.
    public var service: String
    /// The method that reported it (`reverse`), filled in by the registry when empty.
    public var method: String

    public init(_ code: Code, _ message: String, service: String = "", method: String = "") {
        self.code = code
        self.message = message
        self.service = service
        self.method = method
    }

    /// The error as scripts see it, the one shape for a completion's `err`, a `didFail` payload
    /// and a plugin's answer: a read-only `error` data model with `code`, `message`, `service`
    /// and `method`, whose `tostring` is ``description``.
    public var value: Value {
        .model(DataModel(Self.schema, [.string(code.name), .string(message), .string(service), .string(method)]))
    }

    /// The type name of ``value``'s data model.
    public static let typeName = "error"

    /// The fields of ``value``'s data model: declared once, so a misspelled read of one
    /// (`err.mesage`) is named with the fields it has. `where` is set only on an error raised
    /// at a script's line (``value(raisedAt:)``).
    static let schema = ModelSchema(typeName, ["code", "message", "service", "method", "where"])

    /// ``value`` with `where` set to `place` (`script.lua:3: `), for an error raised at a
    /// script's line: its `tostring` starts with the place, as Lua's own errors do.
    public func value(raisedAt place: String) -> Value {
        .model(DataModel(Self.schema, [.string(code.name), .string(message), .string(service), .string(method), .string(place)]))
    }

    /// The error a value made by ``value`` (or any record with a known `code` and a `message`)
    /// stands for; nil for anything else.
    public init?(value: Value) {
        guard let name = value["code"].stringValue, let code = Code(name: name),
              let message = value["message"].stringValue else { return nil }
        self.init(code, message, service: value["service"].stringValue ?? "", method: value["method"].stringValue ?? "")
    }

    /// The same error, naming `service` when it names none yet.
    public func reported(by service: String) -> ServiceError {
        var error = self
        if error.service.isEmpty { error.service = service }
        return error
    }

    /// `geocoder.reverse: invalid_argument: latitude 123 is outside [-90, 90]`.
    public var description: String {
        Self.describe(code: code.name, message: message, service: service, method: method)
    }

    /// The one wording of an error: `service.method: code: message`, leaving out what is empty.
    public static func describe(code: String, message: String, service: String, method: String) -> String {
        let place = service.isEmpty ? method : (method.isEmpty ? service : "\(service).\(method)")
        return place.isEmpty ? "\(code): \(message)" : "\(place): \(code): \(message)"
    }
}
