import Model

/// Character data and references.
extension XMLReader {
    /// Text up to the next `<`. Outside the root element only white space may stand.
    mutating func characterData() throws(ServiceError) -> Step {
        let start = position
        var stop = firstIndex(of: UInt8(ascii: "<"), from: start) ?? buffer.count
        if stop == buffer.count && !isFinal {
            // A long text is given in pieces rather than held whole; a short one waits for its end.
            guard stop - start >= Self.chunkSize else { return .needsMore }
            stop = safeCut(start..<stop)
            guard stop > start else { return .needsMore }
        }
        guard isInsideRoot else {
            if let text = (start..<stop).first(where: { !Self.isSpace(buffer[$0]) }) {
                throw malformed("text before the root element", at: text)
            }
            position = stop
            return .skipped
        }
        position = stop
        guard collectsText else { return .skipped }
        return .event(.text(decodedText(start..<stop)))
    }

    /// Where text that runs to the end of the buffer can be cut: not inside a reference, a
    /// UTF-8 sequence or a CR LF pair.
    private func safeCut(_ range: Range<Int>) -> Int {
        var cut = range.upperBound
        if let ampersand = buffer[max(range.lowerBound, cut - 40)..<cut].lastIndex(of: UInt8(ascii: "&")) { cut = ampersand }
        var lead = cut - 1
        while lead > range.lowerBound, buffer[lead] & 0xC0 == 0x80 { lead -= 1 }
        if lead >= range.lowerBound, buffer[lead] >= 0xC0 { cut = lead }
        if cut > range.lowerBound, buffer[cut - 1] == 0x0D { cut -= 1 }
        return cut
    }

    /// The text of `range`: references decoded (unless CDATA), line breaks normalized to `\n`;
    /// in an attribute value, tabs and line breaks become spaces.
    func decodedText(_ range: Range<Int>, isAttribute: Bool = false, decodesReferences: Bool = true) -> String {
        let plain = buffer.withUnsafeBufferPointer { bytes in
            !bytes[range].contains { byte in
                (byte == UInt8(ascii: "&") && decodesReferences) || byte == 0x0D || (isAttribute && (byte == 0x0A || byte == 0x09))
            }
        }
        if plain { return String(decoding: buffer[range], as: UTF8.self) }
        var output: [UInt8] = []
        output.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = buffer[index]
            switch byte {
            case UInt8(ascii: "&") where decodesReferences:
                if let (scalar, length) = reference(at: index, end: range.upperBound) {
                    XMLDecoder.appendUTF8(scalar, to: &output)
                    index += length
                } else {
                    output.append(byte)
                    index += 1
                }
            case 0x0D:
                output.append(isAttribute ? 0x20 : 0x0A)
                index += index + 1 < range.upperBound && buffer[index + 1] == 0x0A ? 2 : 1
            case 0x0A where isAttribute, 0x09 where isAttribute:
                output.append(0x20)
                index += 1
            default:
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The reference at `start` (an `&`) and its length: `&amp;`, `&#233;`, `&#xE9;`, `&eacute;`.
    /// Nil when it is none the reader decodes (a bare `&`, an undeclared or DTD-declared entity),
    /// so it stays as written. A character reference to no character (`&#0;`, a surrogate)
    /// is U+FFFD.
    private func reference(at start: Int, end: Int) -> (UInt32, Int)? {
        var index = start + 1
        let limit = min(end, start + 34)
        if index < limit, buffer[index] == UInt8(ascii: "#") {
            index += 1
            let isHex = index < limit && buffer[index] | 0x20 == UInt8(ascii: "x")
            if isHex { index += 1 }
            let digitsStart = index
            var value: UInt32 = 0
            while index < limit, let digit = Self.digit(buffer[index], hex: isHex) {
                value = min(value &* (isHex ? 16 : 10) &+ digit, 0x11_0000)
                index += 1
            }
            guard index > digitsStart, index < limit, buffer[index] == UInt8(ascii: ";") else { return nil }
            let valid = value != 0 && value < 0x11_0000 && !(0xD800...0xDFFF).contains(value)
            return (valid ? value : 0xFFFD, index + 1 - start)
        }
        let nameStart = index
        while index < limit, (0x61...0x7A).contains(buffer[index] | 0x20) || (0x30...0x39).contains(buffer[index]) { index += 1 }
        guard index > nameStart, index < limit, buffer[index] == UInt8(ascii: ";") else { return nil }
        let length = index + 1 - start
        let name = buffer[nameStart..<index]
        switch name.count {
        case 2 where name.elementsEqual("lt".utf8): return (0x3C, length)
        case 2 where name.elementsEqual("gt".utf8): return (0x3E, length)
        case 3 where name.elementsEqual("amp".utf8): return (0x26, length)
        case 4 where name.elementsEqual("quot".utf8): return (0x22, length)
        case 4 where name.elementsEqual("apos".utf8): return (0x27, length)
        default:
            let scalar = HTMLEntities.scalar(named: Substring(String(decoding: name, as: UTF8.self)))
            return scalar.map { ($0.value, length) }
        }
    }

    private static func digit(_ byte: UInt8, hex: Bool) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f") where hex: UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F") where hex: UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}
