import Model

/// Reads the common call line, a request or a notification in a plain envelope
/// (`{"jsonrpc":"2.0","id":1,"method":"eval","params":{…}}`, keys in any order), without
/// building the envelope as a JSON object first: only `params` goes through the JSON decoder.
///
/// It answers only when it is sure the full reading (``JSONRPCMessage/parse(_:)`` of the decoded
/// document) would give the same message; anything else (escapes in the envelope's strings, another
/// field, a duplicate, a number that is not a plain integer, bad JSON) returns nil and the line is
/// read the full way, errors and all.
struct JSONRPCCallScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The request or notification `line` holds, or nil to read it the full way.
    static func call(in line: UnsafeBufferPointer<UInt8>) -> JSONRPCMessage? {
        var scanner = JSONRPCCallScanner(bytes: line)
        return scanner.call()
    }

    private mutating func call() -> JSONRPCMessage? {
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return nil }
        var versioned = false
        var id: JSONRPCID?
        var method: String?
        var params: Value?
        while true {
            skipSpace()
            guard let key = plainString() else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipSpace()
            switch Key(key) {
            case .jsonrpc:
                guard !versioned, let version = plainString(), Key.equal(version, "2.0") else { return nil }
                versioned = true
            case .id:
                guard id == nil, let value = idValue() else { return nil }
                id = value
            case .method:
                guard method == nil, let name = plainString() else { return nil }
                method = String(decoding: name, as: UTF8.self)
            case .params:
                guard params == nil, let value = paramsValue() else { return nil }
                params = value
            case .other:
                return nil
            }
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "}")) else { return nil }
            break
        }
        skipSpace()
        guard position == bytes.count, versioned, let method else { return nil }
        guard let id else { return .notification(method: method, params: params ?? .null) }
        return .request(id: id, method: method, params: params ?? .null)
    }

    /// The envelope's fields this scanner reads.
    private enum Key {
        case jsonrpc, id, method, params, other

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            if Self.equal(bytes, "jsonrpc") {
                self = .jsonrpc
            } else if Self.equal(bytes, "id") {
                self = .id
            } else if Self.equal(bytes, "method") {
                self = .method
            } else if Self.equal(bytes, "params") {
                self = .params
            } else {
                self = .other
            }
        }

        static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
            guard bytes.count == text.utf8CodeUnitCount else { return false }
            let expected = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
            return bytes.elementsEqual(expected)
        }
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        position += 1
        return true
    }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    /// The bytes of a string without escapes or control characters, between its quotes.
    private mutating func plainString() -> UnsafeBufferPointer<UInt8>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        while let byte = current {
            if byte == UInt8(ascii: "\"") {
                position += 1
                return UnsafeBufferPointer(rebasing: bytes[start..<position - 1])
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            position += 1
        }
        return nil
    }

    /// An integer written plainly (`7`, `-12`, `0`) that fits 64 bits, or a plain string.
    private mutating func idValue() -> JSONRPCID? {
        if current == UInt8(ascii: "\"") {
            return plainString().map { .string(String(decoding: $0, as: UTF8.self)) }
        }
        let negative = take(UInt8(ascii: "-"))
        let start = position
        var magnitude: UInt64 = 0
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            let (times, overflowA) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            magnitude = sum
            position += 1
        }
        let digits = position - start
        // No digits, a leading zero, or a fraction or an exponent next: read the full way.
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0"),
              current != UInt8(ascii: "."), current != UInt8(ascii: "e"), current != UInt8(ascii: "E") else { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return .integer(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return .integer(Int64(magnitude))
    }

    /// An object or an array, decoded by the JSON decoder, or `null`.
    private mutating func paramsValue() -> Value? {
        let start = position
        switch current {
        case UInt8(ascii: "n"):
            for expected in "null".utf8 {
                guard take(expected) else { return nil }
            }
            return .null
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard skipNested() else { return nil }
            return try? Value.decodeJSON(UnsafeBufferPointer(rebasing: bytes[start..<position]), maxDepth: JSONRPCMessage.envelopeDepth)
        default:
            return nil
        }
    }

    /// Moves past the object or array that starts here: to its closing bracket, minding strings.
    private mutating func skipNested() -> Bool {
        var depth = 0
        while let byte = current {
            position += 1
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return true }
            case UInt8(ascii: "\""):
                while let inner = current {
                    position += 1
                    if inner == UInt8(ascii: "\\") {
                        position += 1
                    } else if inner == UInt8(ascii: "\"") {
                        break
                    }
                }
            default:
                break
            }
        }
        return false
    }
}
