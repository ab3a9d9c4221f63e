extension Value {
    /// The value as JSON text, the one encoding every part of Crescent uses (store records, the
    /// `json` view output, machine-readable reports).
    ///
    /// Integers and floats stay distinct through a round trip, as in Lua 5.4: a float is always
    /// written with a fraction or an exponent (`1.0`, `1e+20`). Object keys are sorted, so equal
    /// values have equal text. A data model is written as a plain object; object handles and
    /// non-finite numbers (which JSON cannot hold) as `null`; bytes as a string, invalid UTF-8
    /// sequences replaced.
    ///
    /// ```swift
    /// Value.object(["n": 1, "x": 1.0]).jsonText   // {"n":1,"x":1.0}
    /// ```
    public var jsonText: String {
        var text = ""
        text.reserveCapacity(64)
        Self.writeJSON(self, into: &text)
        return text
    }

    /// `text` as a JSON string literal, quoted and escaped.
    public static func jsonString(_ text: String) -> String {
        var result = ""
        writeJSONString(text, into: &result)
        return result
    }

    private static func writeJSON(_ value: Value, into text: inout String) {
        switch value {
        case .null, .handle: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .integer(let integer): text += String(integer)
        case .number(let number):
            guard number.isFinite else {
                text += "null"
                return
            }
            let shortest = number.description
            text += shortest.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? shortest : shortest + ".0"
        case .string(let string): writeJSONString(string, into: &text)
        case .bytes(let bytes): writeJSONString(String(decoding: bytes, as: UTF8.self), into: &text)
        case .array(let items):
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                writeJSON(item, into: &text)
            }
            text += "]"
        case .object(let fields): writeJSONObject(fields, into: &text)
        case .model(let model): writeJSONObject(model.fields, into: &text)
        }
    }

    private static func writeJSONObject(_ fields: [String: Value], into text: inout String) {
        text += "{"
        for (index, key) in fields.keys.sorted().enumerated() {
            if index > 0 { text += "," }
            writeJSONString(key, into: &text)
            text += ":"
            writeJSON(fields[key] ?? .null, into: &text)
        }
        text += "}"
    }

    private static func writeJSONString(_ string: String, into text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
