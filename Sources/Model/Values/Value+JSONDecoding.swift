extension Value {
    /// The value of the JSON text `text`: the one JSON decoder of every part of Crescent (store
    /// records, gpsd reports, JSON Feed, JSON-RPC lines), beside the encoder ``jsonText``.
    ///
    /// It reads strict RFC 8259 JSON. Numbers without a fraction or an exponent that fit 64 bits
    /// become `.integer`, others `.number`, so an encode/decode round trip keeps Lua 5.4's subtypes.
    /// A leading byte-order mark is skipped; nesting is limited to ``jsonMaxDepth`` levels. Text
    /// that is not valid UTF-8, a lone surrogate escape (`"\ud800"`) and a number too large for a
    /// double are refused, as the encoder refuses what has no JSON form (``json(indent:sortKeys:)``).
    ///
    /// ```swift
    /// let report = try Value(jsonText: #"{"class":"TPV","lat":48.85}"#)
    /// report["lat"].doubleValue   // 48.85
    /// ```
    ///
    /// - Throws: `invalid_data` naming the byte offset and what was expected there.
    public init(jsonText text: String) throws(ServiceError) {
        var text = text
        let decoded = text.withUTF8 { bytes in Result { () throws(ServiceError) in try Value.decodeJSON(bytes) } }
        self = try decoded.get()
    }

    /// The value of the JSON document in `bytes` (see ``init(jsonText:)``), nested at most
    /// `maxDepth` levels: an envelope around values (a JSON-RPC message) allows for its own levels.
    public init(jsonBytes bytes: some Collection<UInt8>, maxDepth: Int = jsonMaxDepth) throws(ServiceError) {
        let decoded = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(ServiceError) in try Value.decodeJSON(buffer, maxDepth: maxDepth) }
        }
        if let decoded {
            self = try decoded.get()
        } else {
            let copy = Array(bytes)
            self = try copy.withUnsafeBufferPointer { buffer in
                Result { () throws(ServiceError) in try Value.decodeJSON(buffer, maxDepth: maxDepth) }
            }.get()
        }
    }

    /// How deeply arrays and objects may nest: in JSON read or written, in a value converted from
    /// Lua and in a store record, one limit for every path.
    public static let jsonMaxDepth = 100

    /// The value of the JSON document in `bytes`, nested at most `maxDepth` levels.
    public static func decodeJSON(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = jsonMaxDepth) throws(ServiceError) -> Value {
        var reader = JSONReader(bytes: bytes, maxDepth: maxDepth)
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { reader.position = 3 }
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.position == bytes.count else { throw reader.failure("the end of the document") }
        return value
    }
}

/// A recursive-descent reader over UTF-8 bytes, used by ``Value/decodeJSON(_:)`` only.
private struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    func failure(_ expected: String) -> ServiceError {
        guard let byte = current else {
            return ServiceError(.invalidData, "invalid JSON: the text ends at \(place(position)) (expected \(expected))")
        }
        let shown = (0x20..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
        return ServiceError(.invalidData, "invalid JSON: unexpected \(shown) at \(place(position)) (expected \(expected))")
    }

    /// `line 2, column 5 (byte 14)`: columns count characters; worked out only for a message.
    func place(_ offset: Int) -> String {
        var line = 1, lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        var column = 1
        for index in lineStart..<min(offset, bytes.count) where bytes[index] & 0xC0 != 0x80 { column += 1 }
        return "line \(line), column \(column) (byte \(offset))"
    }

    mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    mutating func value(depth: Int) throws(ServiceError) -> Value {
        skipSpace()
        guard let byte = current else { throw failure("a value") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("a value")
        }
    }

    private mutating func literal(_ word: StaticString, _ value: Value) throws(ServiceError) -> Value {
        let count = word.utf8CodeUnitCount
        for offset in 0..<count {
            guard position < bytes.count, bytes[position] == word.utf8Start[offset] else { throw failure("'\(word)'") }
            position += 1
        }
        return value
    }

    private mutating func nested(_ depth: Int) throws(ServiceError) {
        guard depth <= maxDepth else {
            throw ServiceError(.invalidData, "invalid JSON: nested deeper than \(maxDepth) levels at \(place(position))")
        }
    }

    private mutating func object(depth: Int) throws(ServiceError) -> Value {
        try nested(depth)
        position += 1  // {
        // A repeated member keeps its last value, as JavaScript reads it.
        var fields = Fields()
        skipSpace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(fields)
        }
        while true {
            skipSpace()
            guard current == UInt8(ascii: "\"") else { throw failure("a string key") }
            let key = try string()
            skipSpace()
            guard current == UInt8(ascii: ":") else { throw failure("':'") }
            position += 1
            fields[key] = try value(depth: depth)
            skipSpace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return .object(fields)
            default: throw failure("',' or '}'")
            }
        }
    }

    private mutating func array(depth: Int) throws(ServiceError) -> Value {
        try nested(depth)
        position += 1  // [
        var items: [Value] = []
        skipSpace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(items)
        }
        while true {
            items.append(try value(depth: depth))
            skipSpace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return .array(items)
            default: throw failure("',' or ']'")
            }
        }
    }

    /// A string starting at its opening quote: runs without escapes are copied whole (checked as
    /// UTF-8 only when they hold a byte past ASCII), escapes decoded, surrogate pairs joined.
    private mutating func string() throws(ServiceError) -> String {
        position += 1  // "
        var result = ""
        var runStart = position
        var runIsASCII = true
        while let byte = current {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                let run = UnsafeBufferPointer(rebasing: bytes[runStart..<position])
                if runIsASCII {
                    result += String(decoding: run, as: UTF8.self)
                } else if let text = String(validating: run, as: UTF8.self) {
                    result += text
                } else {
                    throw ServiceError(.invalidData, "invalid JSON: a string that is not valid UTF-8 at \(place(runStart)) (JSON text is UTF-8)")
                }
                runIsASCII = true
                position += 1
                if byte == UInt8(ascii: "\"") { return result }
                result.unicodeScalars.append(try escape())
                runStart = position
            } else if byte < 0x20 {
                throw failure("an escape such as \\n or \\u0000 in place of a control character")
            } else {
                if byte >= 0x80 { runIsASCII = false }
                position += 1
            }
        }
        throw failure("'\"' closing the string")
    }

    private mutating func escape() throws(ServiceError) -> Unicode.Scalar {
        guard let byte = current else { throw failure("an escape") }
        position += 1
        if let character = TextEscapes.shortEscape(byte) { return character }
        switch byte {
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "u"):
            let high = try hex4()
            if (0xD800..<0xDC00).contains(high), position + 1 < bytes.count,
               bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") {
                let mark = position
                position += 2
                let low = try hex4()
                if (0xDC00..<0xE000).contains(low), let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)) {
                    return scalar
                }
                position = mark
            }
            guard let scalar = Unicode.Scalar(high) else {
                throw ServiceError(.invalidData, "invalid JSON: a lone surrogate \\u\(String(high, radix: 16)) at \(place(position - 6)) (a \\uD800-\\uDBFF escape must be followed by a \\uDC00-\\uDFFF one)")
            }
            return scalar
        default:
            position -= 1
            throw failure("one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u")
        }
    }

    private mutating func hex4() throws(ServiceError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = TextEscapes.hexValue(byte) else { throw failure("four hex digits") }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    /// RFC 8259's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func number() throws(ServiceError) -> Value {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        if current == UInt8(ascii: "0") {
            position += 1
        } else {
            guard digits() > 0 else { throw failure("a digit") }
        }
        var isFloat = false
        if current == UInt8(ascii: ".") {
            isFloat = true
            position += 1
            guard digits() > 0 else { throw failure("a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isFloat = true
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { throw failure("a digit in the exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if !isFloat, let integer = Int64(text) { return .integer(integer) }
        guard let number = Double(text), number.isFinite else {
            throw ServiceError(.invalidData, "invalid JSON: the number \(text.prefix(40)) at \(place(start)) is out of range")
        }
        return .number(number)
    }

    private mutating func digits() -> Int {
        var count = 0
        while let byte = current, byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
            position += 1
            count += 1
        }
        return count
    }
}
