import Model

/// A small JSON reader for gpsd's reports: one JSON object per line, into a ``Value``.
///
/// It accepts RFC 8259 JSON; numbers with a fraction or an exponent become `.number`, others
/// `.integer`. Anything else returns nil (the line is skipped).
struct JSONLine {
    private let bytes: [UInt8]
    private var position = 0

    /// The value of `line`, or nil when it is not JSON.
    static func parse(_ line: some Sequence<UInt8>) -> Value? {
        var reader = JSONLine(bytes: Array(line))
        guard let value = reader.value() else { return nil }
        reader.skipSpace()
        guard reader.position == reader.bytes.count else { return nil }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    private mutating func literal(_ word: String, _ value: Value) -> Value? {
        let expected = Array(word.utf8)
        guard bytes.count - position >= expected.count, Array(bytes[position..<position + expected.count]) == expected else { return nil }
        position += expected.count
        return value
    }

    private mutating func value() -> Value? {
        skipSpace()
        switch current {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string().map(Value.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        case .some: return number()
        case nil: return nil
        }
    }

    private mutating func object() -> Value? {
        position += 1
        var fields: [String: Value] = [:]
        skipSpace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(fields)
        }
        while true {
            skipSpace()
            guard current == UInt8(ascii: "\""), let key = string() else { return nil }
            skipSpace()
            guard current == UInt8(ascii: ":") else { return nil }
            position += 1
            guard let item = value() else { return nil }
            fields[key] = item
            skipSpace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return .object(fields)
            default: return nil
            }
        }
    }

    private mutating func array() -> Value? {
        position += 1
        var items: [Value] = []
        skipSpace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(items)
        }
        while true {
            guard let item = value() else { return nil }
            items.append(item)
            skipSpace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return .array(items)
            default: return nil
            }
        }
    }

    private mutating func string() -> String? {
        position += 1
        var output: [UInt8] = []
        var pendingHigh: UInt32?
        while let byte = current {
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: output, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escape = current else { return nil }
                position += 1
                switch escape {
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
                case UInt8(ascii: "u"):
                    guard position + 4 <= bytes.count,
                          let code = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
                    else { return nil }
                    position += 4
                    var scalar: Unicode.Scalar?
                    if (0xD800..<0xDC00).contains(code) {
                        pendingHigh = code
                    } else if (0xDC00..<0xE000).contains(code), let high = pendingHigh {
                        scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00))
                        pendingHigh = nil
                    } else {
                        scalar = Unicode.Scalar(code)
                    }
                    if let scalar { output.append(contentsOf: String(Character(scalar)).utf8) }
                default: return nil
                }
            default:
                output.append(byte)
            }
        }
        return nil
    }

    private mutating func number() -> Value? {
        let start = position
        var isFloat = false
        while let byte = current, "0123456789-+.eE".utf8.contains(byte) {
            if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { isFloat = true }
            position += 1
        }
        guard position > start else { return nil }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if !isFloat, let integer = Int64(text) { return .integer(integer) }
        return Double(text).map(Value.number)
    }
}
