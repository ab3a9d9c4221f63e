/// A Lua string: bytes, which need not be valid UTF-8 and may contain zeros.
public struct LuaString: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The raw bytes.
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { self.bytes = Array(string.utf8) }
    public init(stringLiteral value: String) { self.init(value) }

    /// The bytes decoded as UTF-8, with invalid sequences replaced by U+FFFD.
    public var description: String { String(decoding: bytes, as: UTF8.self) }

    /// The bytes as a `String` when they are valid UTF-8.
    public var validUTF8: String? { String(validating: bytes, as: UTF8.self) }
}
