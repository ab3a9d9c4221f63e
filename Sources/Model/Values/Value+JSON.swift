extension Value {
    /// The value as JSON text, the one encoding every part of Crescent uses (`json.encode`, store
    /// records, `--ui json`, remote answers), under one rule:
    ///
    /// - Integers and floats stay distinct through a round trip, as in Lua 5.4: a float is always
    ///   written with a fraction or an exponent (`1.0`, `1e+20`), in the fewest digits that read
    ///   back as the same double (`0.30000000000000004`); `-0.0` keeps its sign.
    /// - NaN and the infinities, strings that are not valid UTF-8 and objects (handles) have no
    ///   JSON form and are refused (``JSONEncodingFailure``), never written as `null` or repaired:
    ///   what reads back must be what was written, and binary data is the caller's to encode
    ///   (base64, hex).
    /// - Arrays and objects nest at most ``jsonMaxDepth`` levels. A data model is written as a plain
    ///   object of its fields.
    /// - Object keys are sorted unless `sortKeys` is false (then they keep the record's order),
    ///   so equal values have equal text; `indent` pretty-prints with that string per level.
    ///
    /// ```swift
    /// try Value.object(["n": 1, "x": 1.0]).json()   // {"n":1,"x":1.0}
    /// ```
    ///
    /// - Parameter enclosingLevels: how many arrays and objects the text will be written inside
    ///   (a view's field inside the `--ui json` line): they count towards the depth limit, so the
    ///   whole document reads back under it.
    public func json(indent: String? = nil, sortKeys: Bool = true, enclosingLevels: Int = 0) throws(JSONEncodingFailure) -> String {
        var writer = JSONWriter(indent: indent, sortKeys: sortKeys, strict: true)
        try writer.write(self, depth: enclosingLevels)
        return writer.text
    }

    /// Why the value has no JSON text (see ``json(indent:sortKeys:)``), or nil when it has one:
    /// a walk that writes nothing, for a caller that checks before it sends.
    public var jsonFailure: JSONEncodingFailure? {
        do throws(JSONEncodingFailure) {
            try JSONWriter.check(self, depth: 0)
            return nil
        } catch {
            return error
        }
    }

    /// The value's JSON text for messages and logs: the text of ``json(indent:sortKeys:)`` when
    /// it has one; otherwise what JSON cannot hold is shown as `null` (numbers, objects) or with
    /// U+FFFD (bytes) so the message can still be written. Data is written with
    /// ``json(indent:sortKeys:)``, which refuses those.
    public var jsonText: String {
        var writer = JSONWriter(indent: nil, sortKeys: true, strict: false)
        writer.text.reserveCapacity(64)
        try? writer.write(self, depth: 0)
        return writer.text
    }

    /// Appends the value's JSON text (``jsonText``) to `text`: a message that wraps values in an
    /// envelope writes them all into one string instead of joining a string per value.
    public func appendJSON(to text: inout String) {
        var writer = JSONWriter(indent: nil, sortKeys: true, strict: false)
        swap(&writer.text, &text)
        try? writer.write(self, depth: 0)
        swap(&writer.text, &text)
    }

    /// Appends `string` as a JSON string literal, quoted and escaped (see ``jsonString(_:)``).
    public static func appendJSONString(_ string: String, to text: inout String) {
        JSONWriter.writeString(string, into: &text)
    }

    /// `text` as a JSON string literal, quoted and escaped.
    public static func jsonString(_ text: String) -> String {
        var result = ""
        JSONWriter.writeString(text, into: &result)
        return result
    }
}

/// Writes JSON text, strictly (``Value/json(indent:sortKeys:)``) or for messages
/// (``Value/jsonText``); used by this file only.
private struct JSONWriter {
    var text = ""
    let indent: String?
    let sortKeys: Bool
    let strict: Bool

    init(indent: String?, sortKeys: Bool, strict: Bool) {
        self.indent = indent
        self.sortKeys = sortKeys
        self.strict = strict
    }

    /// Checks what ``write(_:depth:)`` would refuse, writing nothing.
    static func check(_ value: Value, depth: Int) throws(JSONEncodingFailure) {
        switch value {
        case .null, .bool, .integer, .string: return
        case .number(let number): if !number.isFinite { throw JSONEncodingFailure(.nonFinite(number)) }
        case .bytes: throw JSONEncodingFailure(.invalidUTF8)
        case .handle(let handle): throw JSONEncodingFailure(.object(handle.typeName))
        case .array(let items):
            guard depth < Value.jsonMaxDepth else { throw JSONEncodingFailure(.tooDeep) }
            for (index, item) in items.enumerated() {
                do throws(JSONEncodingFailure) { try check(item, depth: depth + 1) } catch {
                    var failure = error
                    failure.within(ValuePath.index(Int64(index + 1)))
                    throw failure
                }
            }
        case .object(let fields): try checkFields(fields, depth: depth)
        case .model(let model): try checkFields(model.fields, depth: depth)
        case .packed(let models): try check(.array(models.values), depth: depth)
        }
    }

    private static func checkFields(_ fields: Fields, depth: Int) throws(JSONEncodingFailure) {
        guard depth < Value.jsonMaxDepth else { throw JSONEncodingFailure(.tooDeep) }
        for (key, item) in fields {
            do throws(JSONEncodingFailure) { try check(item, depth: depth + 1) } catch {
                var failure = error
                failure.within(ValuePath.member(key))
                throw failure
            }
        }
    }

    mutating func write(_ value: Value, depth: Int) throws(JSONEncodingFailure) {
        switch value {
        case .null: text += "null"
        case .handle(let handle):
            if strict { throw JSONEncodingFailure(.object(handle.typeName)) }
            text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .integer(let integer): text += String(integer)
        case .number(let number):
            guard number.isFinite else {
                if strict { throw JSONEncodingFailure(.nonFinite(number)) }
                text += "null"
                return
            }
            let shortest = number.description
            text += shortest
            if !shortest.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") }) { text += ".0" }
        case .string(let string): Self.writeString(string, into: &text)
        case .bytes(let bytes):
            if strict { throw JSONEncodingFailure(.invalidUTF8) }
            Self.writeString(String(decoding: bytes, as: UTF8.self), into: &text)
        case .array(let items):
            guard depth < Value.jsonMaxDepth || !strict else { throw JSONEncodingFailure(.tooDeep) }
            guard !items.isEmpty else {
                text += "[]"
                return
            }
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                newline(depth + 1)
                do throws(JSONEncodingFailure) { try write(item, depth: depth + 1) } catch {
                    var failure = error
                    failure.within(ValuePath.index(Int64(index + 1)))
                    throw failure
                }
            }
            newline(depth)
            text += "]"
        case .object(let fields): try writeObject(fields, depth: depth)
        case .model(let model): try writeObject(model.fields, depth: depth)
        case .packed(let models): try write(.array(models.values), depth: depth)
        }
    }

    private mutating func writeObject(_ fields: Fields, depth: Int) throws(JSONEncodingFailure) {
        guard depth < Value.jsonMaxDepth || !strict else { throw JSONEncodingFailure(.tooDeep) }
        guard !fields.isEmpty else {
            text += "{}"
            return
        }
        text += "{"
        let ordered: [Fields.Element] = sortKeys ? fields.sorted(by: { $0.key < $1.key }) : Array(fields)
        for (index, field) in ordered.enumerated() {
            if index > 0 { text += "," }
            newline(depth + 1)
            Self.writeString(field.key, into: &text)
            text += indent == nil ? ":" : ": "
            do throws(JSONEncodingFailure) { try write(field.value, depth: depth + 1) } catch {
                var failure = error
                failure.within(ValuePath.member(field.key))
                throw failure
            }
        }
        newline(depth)
        text += "}"
    }

    /// With an indent: a line break and `depth` indents.
    private mutating func newline(_ depth: Int) {
        guard let indent else { return }
        text += "\n"
        for _ in 0..<depth { text += indent }
    }

    static func writeString(_ string: String, into text: inout String) {
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
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
