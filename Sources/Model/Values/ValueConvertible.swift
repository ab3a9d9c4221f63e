/// A Swift type that converts to and from ``Value``, so services can use typed properties.
public protocol ValueConvertible: Sendable {
    /// The value as seen by consumers.
    var value: Value { get }
    /// The Swift value from a consumer's value, or nil when it does not fit.
    init?(value: Value)
}

extension Value: ValueConvertible {
    public var value: Value { self }
    public init?(value: Value) { self = value }
}

extension Bool: ValueConvertible {
    public var value: Value { .bool(self) }
    public init?(value: Value) {
        guard let flag = value.boolValue else { return nil }
        self = flag
    }
}

extension Int: ValueConvertible {
    public var value: Value { .integer(Int64(self)) }
    public init?(value: Value) {
        guard let integer = value.integerValue, let exact = Int(exactly: integer) else { return nil }
        self = exact
    }
}

extension Int64: ValueConvertible {
    public var value: Value { .integer(self) }
    public init?(value: Value) {
        guard let integer = value.integerValue else { return nil }
        self = integer
    }
}

extension Double: ValueConvertible {
    public var value: Value { .number(self) }
    public init?(value: Value) {
        guard let number = value.doubleValue else { return nil }
        self = number
    }
}

extension String: ValueConvertible {
    public var value: Value { .string(self) }
    public init?(value: Value) {
        guard let string = value.stringValue else { return nil }
        self = string
    }
}

extension Optional: ValueConvertible where Wrapped: ValueConvertible {
    public var value: Value { self?.value ?? .null }
    public init?(value: Value) {
        if value.isNull {
            self = .none
        } else if let wrapped = Wrapped(value: value) {
            self = .some(wrapped)
        } else {
            return nil
        }
    }
}

extension DataModel: ValueConvertible {
    public var value: Value { .model(self) }
    public init?(value: Value) {
        guard case .model(let model) = value else { return nil }
        self = model
    }
}

extension Array: ValueConvertible where Element: ValueConvertible {
    public var value: Value { .array(map(\.value)) }
    public init?(value: Value) {
        guard let items = value.arrayValue else { return nil }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for item in items {
            guard let element = Element(value: item) else { return nil }
            result.append(element)
        }
        self = result
    }
}
