import Glibc
import Model

/// Tags, comments, processing instructions, CDATA and the doctype.
extension XMLReader {
    /// `<name attribute="value" …>` or `<name …/>`.
    mutating func startTag() throws(ServiceError) -> Step {
        let nameStart = position + 1
        let nameEnd = endOfName(from: nameStart)
        guard nameEnd < buffer.count else { return try incomplete("the start tag <\(string(nameStart..<nameEnd)) is not closed") }
        guard nameEnd > nameStart, Self.isNameStart(buffer[nameStart]) else {
            throw malformed("a '<' that starts no tag (text writes it &lt;)")
        }
        let qualifiedName = string(nameStart..<nameEnd)
        var attributes: [(name: Range<Int>, value: Range<Int>)] = []
        var index = nameEnd
        var selfClosing = false
        while true {
            index = skipSpace(from: index)
            guard index < buffer.count else { return try incomplete("the start tag <\(qualifiedName)> is not closed") }
            if buffer[index] == UInt8(ascii: ">") {
                index += 1
                break
            }
            if buffer[index] == UInt8(ascii: "/") {
                guard index + 1 < buffer.count else { return try incomplete("the start tag <\(qualifiedName)> is not closed") }
                guard buffer[index + 1] == UInt8(ascii: ">") else {
                    throw malformed("a '/' in the start tag <\(qualifiedName)> that is not followed by '>'", at: index)
                }
                index += 2
                selfClosing = true
                break
            }
            let attributeStart = index
            let attributeEnd = endOfName(from: index)
            guard attributeEnd < buffer.count else { return try incomplete("the start tag <\(qualifiedName)> is not closed") }
            guard attributeEnd > attributeStart, Self.isNameStart(buffer[attributeStart]) else {
                throw malformed("the start tag <\(qualifiedName)> has a character that starts no attribute", at: index)
            }
            let attribute = string(attributeStart..<attributeEnd)
            index = skipSpace(from: attributeEnd)
            guard index < buffer.count else { return try incomplete("the start tag <\(qualifiedName)> is not closed") }
            guard buffer[index] == UInt8(ascii: "=") else {
                throw malformed("the attribute \(attribute) of <\(qualifiedName)> has no value (write \(attribute)=\"…\")", at: attributeStart)
            }
            index = skipSpace(from: index + 1)
            guard index < buffer.count else { return try incomplete("the start tag <\(qualifiedName)> is not closed") }
            let quote = buffer[index]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw malformed("the value of attribute \(attribute) of <\(qualifiedName)> is not quoted", at: index)
            }
            guard let close = firstIndex(of: quote, from: index + 1) else {
                return try incomplete("the value of attribute \(attribute) of <\(qualifiedName)> is not closed")
            }
            attributes.append((attributeStart..<attributeEnd, index + 1..<close))
            index = close + 1
        }
        position = index
        return .event(element(qualifiedName, attributes, selfClosing: selfClosing))
    }

    /// The element of a complete start tag: its namespace declarations go into scope first,
    /// then its names are resolved.
    private mutating func element(_ qualifiedName: String, _ raw: [(name: Range<Int>, value: Range<Int>)],
                                  selfClosing: Bool) -> Event {
        let mark = scope.mark
        var written: [(name: String, value: String)] = []
        // Names seen, for spotting a repeated one without a quadratic search in a hostile tag.
        var seen = Set<String>()
        for (nameRange, valueRange) in raw {
            let name = string(nameRange)
            let value = decodedText(valueRange, isAttribute: true)
            if name == "xmlns" {
                scope.declare("", value)
            } else if name.hasPrefix("xmlns:") {
                scope.declare(String(name.dropFirst(6)), value)
            } else if raw.count < 8 ? !written.contains(where: { $0.name == name }) : seen.insert(name).inserted {
                written.append((name, value))
            }
        }
        let attributes = written.map { name, value in
            let resolved = scope.resolve(name, isAttribute: true)
            return XMLAttribute(qualifiedName: name, name: resolved.name, namespace: resolved.namespace, value: value)
        }
        let resolved = scope.resolve(qualifiedName, isAttribute: false)
        let element = XMLElement(name: resolved.name, namespace: resolved.namespace, qualifiedName: qualifiedName,
                                 attributes: attributes)
        return openElement(element, scopeMark: mark, selfClosing: selfClosing)
    }

    /// `</name>`, which must close the innermost open element.
    mutating func endTag() throws(ServiceError) -> Step {
        let nameStart = position + 2
        let nameEnd = endOfName(from: nameStart)
        let index = skipSpace(from: nameEnd)
        guard index < buffer.count else { return try incomplete("the end tag </\(string(nameStart..<nameEnd)) is not closed") }
        let name = string(nameStart..<nameEnd)
        guard buffer[index] == UInt8(ascii: ">") else { throw malformed("the end tag </\(name)> is not closed with '>'", at: index) }
        position = index + 1
        guard let expected = innermostName else { throw malformed("the end tag </\(name)> closes no element") }
        guard expected == name else { throw malformed("the end tag </\(name)> does not match <\(expected)>") }
        return .event(closeElement())
    }

    /// `<?target …?>`, the XML declaration included (``XMLEncoding`` has read its encoding).
    mutating func processingInstruction() throws(ServiceError) -> Step {
        guard let end = firstIndex(of: "?>", from: position + 2) else {
            return try incomplete("a processing instruction (<?…) is not closed with '?>'")
        }
        position = end + 2
        return .skipped
    }

    /// `<!--…-->`, `<![CDATA[…]]>` or `<!DOCTYPE …>`.
    mutating func markupDeclaration() throws(ServiceError) -> Step {
        let comment = matches("<!--", at: position)
        let cdata = matches("<![CDATA[", at: position)
        let doctype = matches("<!DOCTYPE", at: position, ignoringCase: true)
        if comment == true {
            guard let end = firstIndex(of: "-->", from: position + 4) else { return try incomplete("a comment (<!--) is not closed with '-->'") }
            position = end + 3
            return .skipped
        }
        if cdata == true {
            guard let end = firstIndex(of: "]]>", from: position + 9) else {
                return try incomplete("a CDATA section (<![CDATA[) is not closed with ']]>'")
            }
            guard isInsideRoot else { throw malformed("a CDATA section outside the root element") }
            let text = position + 9..<end
            position = end + 3
            guard collectsText, !text.isEmpty else { return .skipped }
            return .event(.text(decodedText(text, decodesReferences: false)))
        }
        if doctype == true {
            guard !hasRoot else { throw malformed("a doctype inside the root element") }
            return try skipDoctype()
        }
        if comment == nil || cdata == nil || doctype == nil {
            return try incomplete("'<!' starts no comment, CDATA section or doctype")
        }
        throw malformed("'<!' starts no comment, CDATA section or doctype")
    }

    /// Skips the doctype, its internal subset included: entity declarations are not read, so
    /// none is ever expanded.
    private mutating func skipDoctype() throws(ServiceError) -> Step {
        var index = position + 9
        var inSubset = false
        while index < buffer.count {
            switch buffer[index] {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                guard let close = firstIndex(of: buffer[index], from: index + 1) else { return try incomplete("the doctype is not closed") }
                index = close
            case UInt8(ascii: "["): inSubset = true
            case UInt8(ascii: "]"): inSubset = false
            case UInt8(ascii: "<") where inSubset && matches("<!--", at: index) == true:
                guard let end = firstIndex(of: "-->", from: index + 4) else { return try incomplete("the doctype is not closed") }
                index = end + 2
            case UInt8(ascii: ">") where !inSubset:
                position = index + 1
                return .skipped
            default: break
            }
            index += 1
        }
        return try incomplete("the doctype is not closed")
    }

    // MARK: Bytes

    static func isNameStart(_ byte: UInt8) -> Bool {
        byte >= 0x80 || (0x61...0x7A).contains(byte | 0x20) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
    }

    private static let nameBytes: [Bool] = (0...255).map { (byte: Int) in
        let byte = UInt8(byte)
        return isNameStart(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    /// The end of the name that starts at `index` (`index` itself when none does).
    func endOfName(from index: Int) -> Int {
        var end = index
        while end < buffer.count, Self.nameBytes[Int(buffer[end])] { end += 1 }
        return end
    }

    func skipSpace(from index: Int) -> Int {
        var end = index
        while end < buffer.count, Self.isSpace(buffer[end]) { end += 1 }
        return end
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    func string(_ range: Range<Int>) -> String {
        String(decoding: buffer[range], as: UTF8.self)
    }

    /// The first `byte` at or after `index`.
    func firstIndex(of byte: UInt8, from index: Int) -> Int? {
        guard index < buffer.count else { return nil }
        return buffer.withUnsafeBufferPointer { bytes in
            // Invariant: index < count, so the buffer is not empty and its base is not nil.
            let base = bytes.baseAddress!
            guard let found = memchr(base + index, Int32(byte), bytes.count - index) else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// The first occurrence of `pattern` at or after `index`.
    func firstIndex(of pattern: StaticString, from index: Int) -> Int? {
        let first = pattern.utf8Start.pointee
        var candidate = index
        while let found = firstIndex(of: first, from: candidate) {
            guard let match = matches(pattern, at: found) else { return nil }
            if match { return found }
            candidate = found + 1
        }
        return nil
    }

    /// Whether `pattern` is at `index`; nil when the buffer ends before it could tell.
    func matches(_ pattern: StaticString, at index: Int, ignoringCase: Bool = false) -> Bool? {
        let count = pattern.utf8CodeUnitCount
        return pattern.withUTF8Buffer { expected in
            for offset in 0..<count {
                guard index + offset < buffer.count else { return nil }
                let byte = buffer[index + offset]
                let wanted = expected[offset]
                if byte == wanted || (ignoringCase && (0x61...0x7A).contains(wanted | 0x20) && byte | 0x20 == wanted | 0x20) { continue }
                return false
            }
            return true
        }
    }
}
