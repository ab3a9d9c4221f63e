/// Mends the ampersands real feeds get wrong, so a strict XML parser reads them.
///
/// XML knows five named entities; feeds written by HTML tools use the others (`&nbsp;`,
/// `&eacute;`) and bare ampersands (`AT&T`), and libxml2 rejects both. Outside CDATA sections
/// and comments:
/// - an HTML 4.01 entity becomes its numeric reference (`&nbsp;` → `&#160;`);
/// - any other `&` that does not start a valid reference is escaped (`AT&T` → `AT&amp;T`,
///   `&bogus;` → `&amp;bogus;`), so the text keeps what was written.
///
/// Entities a document declares in its DTD are escaped the same way, so they are never expanded:
/// feeds have no use for them, and nested ones could blow up in memory ("billion laughs").
/// (External entities are not loaded either: see ``XMLFeedReader``.)
///
/// A document that needs no repair is returned as it is, without a copy.
enum XMLEntityRepair {
    static func repair(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8]?           // made at the first change
        var copied = 0                 // bytes[..<copied] are already in output
        var position = 0
        let count = bytes.count
        while position < count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "<") {
                if matches(bytes, at: position, "<![CDATA[") {
                    position = end(of: "]]>", in: bytes, from: position + 9)
                } else if matches(bytes, at: position, "<!--") {
                    position = end(of: "-->", in: bytes, from: position + 4)
                } else {
                    position += 1
                }
                continue
            }
            guard byte == UInt8(ascii: "&") else {
                position += 1
                continue
            }
            let (length, replacement) = examine(bytes, at: position)
            if let replacement {
                if output == nil { output = []; output?.reserveCapacity(count + 64) }
                output?.append(contentsOf: bytes[copied..<position])
                output?.append(contentsOf: replacement)
                copied = position + length
            }
            position += length
        }
        guard var repaired = output else { return bytes }
        repaired.append(contentsOf: bytes[copied...])
        return repaired
    }

    /// How many bytes the `&` at `start` and its reference take, and what to write instead (nil
    /// to keep them).
    private static func examine(_ bytes: [UInt8], at start: Int) -> (Int, [UInt8]?) {
        var position = start + 1
        let isNumeric = position < bytes.count && bytes[position] == UInt8(ascii: "#")
        if isNumeric { position += 1 }
        let isHex = isNumeric && position < bytes.count && (bytes[position] | 0x20) == UInt8(ascii: "x")
        if isHex { position += 1 }
        let nameStart = position
        // Long enough for any HTML 4.01 name and any code point.
        while position < bytes.count, position - nameStart < 32, isReferenceByte(bytes[position], hex: isHex, numeric: isNumeric) {
            position += 1
        }
        let escaped = Array("&amp;".utf8)
        guard position > nameStart, position < bytes.count, bytes[position] == UInt8(ascii: ";") else { return (1, escaped) }
        let length = position + 1 - start
        if isNumeric { return (length, nil) }
        let name = String(decoding: bytes[nameStart..<position], as: UTF8.self)
        if ["amp", "lt", "gt", "quot", "apos"].contains(name) { return (length, nil) }
        guard let scalar = HTMLEntities.scalar(named: Substring(name)) else { return (1, escaped) }
        return (length, Array("&#\(scalar.value);".utf8))
    }

    private static func isReferenceByte(_ byte: UInt8, hex: Bool, numeric: Bool) -> Bool {
        let isDigit = (0x30...0x39).contains(byte)
        if numeric && !hex { return isDigit }
        let lowercased = byte | 0x20       // ASCII letters only: the bit makes no other byte a letter
        if hex { return isDigit || (0x61...0x66).contains(lowercased) }
        return isDigit || (0x61...0x7A).contains(lowercased)
    }

    private static func matches(_ bytes: [UInt8], at position: Int, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        return text.withUTF8Buffer { pattern in
            for offset in 0..<count where bytes[position + offset] != pattern[offset] { return false }
            return true
        }
    }

    /// The position just past `terminator` from `position`, or the end of the bytes.
    private static func end(of terminator: StaticString, in bytes: [UInt8], from position: Int) -> Int {
        var index = position
        while index < bytes.count {
            if bytes[index] == terminator.utf8Start.pointee, matches(bytes, at: index, terminator) {
                return index + terminator.utf8CodeUnitCount
            }
            index += 1
        }
        return bytes.count
    }
}
