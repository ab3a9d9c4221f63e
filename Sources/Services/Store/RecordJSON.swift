import Model

/// The JSON text a record is stored as, and back.
///
/// Integers and floats stay distinct through a round trip, as in Lua 5.4: a float is always
/// written with a fraction or an exponent (`1.0`, `1e+20`) and any number read back with one is a
/// float. Object keys are written sorted, so equal records have equal text. Only validated,
/// JSON-shaped values are encoded (see ``RecordValidator``); a data model is written as a plain
/// object.
enum RecordJSON {
    // MARK: Encoding

    /// The JSON text of `value` (Model's one encoding, ``Value/jsonText``).
    static func encode(_ value: Value) -> String { value.jsonText }

    // MARK: Decoding

    /// The value of JSON `text`, or nil when it is not valid JSON.
    static func decode(_ text: String) -> Value? {
        var text = text
        return text.withUTF8 { bytes in
            var parser = Parser(bytes: bytes)
            guard let value = parser.parseValue(depth: 0) else { return nil }
            parser.skipSpace()
            return parser.position == bytes.count ? value : nil
        }
    }

    /// A recursive-descent reader over UTF-8 bytes.
    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        /// Deeper than any record the validator lets through, with room to spare.
        static let maxDepth = 200

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[position]) { position += 1 }
        }

        mutating func parseValue(depth: Int) -> Value? {
            guard depth < Self.maxDepth else { return nil }
            skipSpace()
            guard position < bytes.count else { return nil }
            switch bytes[position] {
            case UInt8(ascii: "{"): return parseObject(depth: depth)
            case UInt8(ascii: "["): return parseArray(depth: depth)
            case UInt8(ascii: "\""): return parseString().map(Value.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            default: return parseNumber()
            }
        }

        private mutating func literal(_ word: StaticString, _ value: Value) -> Value? {
            let count = word.utf8CodeUnitCount
            guard position + count <= bytes.count else { return nil }
            for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] { return nil }
            position += count
            return value
        }

        private mutating func parseObject(depth: Int) -> Value? {
            position += 1
            var fields: [String: Value] = [:]
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(fields)
            }
            while true {
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let key = parseString() else { return nil }
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
                position += 1
                guard let item = parseValue(depth: depth + 1) else { return nil }
                fields[key] = item
                skipSpace()
                guard position < bytes.count else { return nil }
                let separator = bytes[position]
                position += 1
                if separator == UInt8(ascii: "}") { return .object(fields) }
                guard separator == UInt8(ascii: ",") else { return nil }
            }
        }

        private mutating func parseArray(depth: Int) -> Value? {
            position += 1
            var items: [Value] = []
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(items)
            }
            while true {
                guard let item = parseValue(depth: depth + 1) else { return nil }
                items.append(item)
                skipSpace()
                guard position < bytes.count else { return nil }
                let separator = bytes[position]
                position += 1
                if separator == UInt8(ascii: "]") { return .array(items) }
                guard separator == UInt8(ascii: ",") else { return nil }
            }
        }

        /// A string starting at the opening quote; escapes decoded, surrogate pairs joined.
        private mutating func parseString() -> String? {
            position += 1
            var result = ""
            var runStart = position
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    result += String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<position]), as: UTF8.self)
                    position += 1
                    if byte == UInt8(ascii: "\"") { return result }
                    guard let scalar = parseEscape() else { return nil }
                    result.unicodeScalars.append(scalar)
                    runStart = position
                    continue
                }
                position += 1
            }
            return nil
        }

        private mutating func parseEscape() -> Unicode.Scalar? {
            guard position < bytes.count else { return nil }
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                guard let high = parseHex4() else { return nil }
                if (0xD800..<0xDC00).contains(high), position + 1 < bytes.count,
                   bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") {
                    position += 2
                    guard let low = parseHex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                    return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                }
                return Unicode.Scalar(high) ?? "\u{FFFD}"
            default: return nil
            }
        }

        private mutating func parseHex4() -> UInt32? {
            guard position + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = hexDigit(bytes[position]) else { return nil }
                value = value << 4 | digit
                position += 1
            }
            return value
        }

        private func hexDigit(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
            default: nil
            }
        }

        /// An integer when the text has no fraction or exponent and fits 64 bits, else a float.
        private mutating func parseNumber() -> Value? {
            let start = position
            var isFloat = false
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                    isFloat = true
                } else if !(byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) && byte != UInt8(ascii: "-") && byte != UInt8(ascii: "+") {
                    break
                }
                position += 1
            }
            guard position > start else { return nil }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            if !isFloat, let integer = Int64(text) { return .integer(integer) }
            guard let number = Double(text), number.isFinite else { return nil }
            return .number(number)
        }
    }
}
