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

    /// Appends the value's JSON text (``jsonText``) to `text`: a message that wraps values in an
    /// envelope writes them all into one string instead of joining a string per value.
    public func appendJSON(to text: inout String) {
        Self.writeJSON(self, into: &text)
    }

    /// Appends `string` as a JSON string literal, quoted and escaped (see ``jsonString(_:)``).
    public static func appendJSONString(_ string: String, to text: inout String) {
        writeJSONString(string, into: &text)
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

    private static func writeJSONObject(_ fields: Fields, into text: inout String) {
        text += "{"
        for (index, field) in fields.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { text += "," }
            writeJSONString(field.key, into: &text)
            text += ":"
            writeJSON(field.value, into: &text)
        }
        text += "}"
    }

    private static func writeJSONString(_ string: String, into text: inout String) {
        text += "\""
        // Most strings need no escape: copied whole rather than scalar by scalar.
        guard string.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }) else {
            text += string
            text += "\""
            return
        }
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
