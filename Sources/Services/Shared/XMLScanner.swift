import Model

/// A forward-only XML tokenizer for small documents such as GPX: start tags with attributes,
/// end tags and text, with the five named entities and numeric character references decoded.
/// Comments, processing instructions and the doctype are skipped; CDATA is text. Names lose
/// their namespace prefix (`gpx:trkpt` is `trkpt`). It does not check well-formedness beyond
/// what it needs to find tokens; an unterminated construct is `invalid_data`.
struct XMLScanner {
    enum Token: Equatable {
        case start(name: String, attributes: [String: String], selfClosing: Bool)
        case end(name: String)
        case text(String)
    }

    private let bytes: [UInt8]
    private var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    private static func malformed(_ what: String) -> ServiceError {
        ServiceError(.invalidData, "malformed XML: \(what)")
    }

    /// The next token, or nil at the end of the document.
    mutating func next() throws(ServiceError) -> Token? {
        while position < bytes.count {
            guard bytes[position] == UInt8(ascii: "<") else {
                let start = position
                while position < bytes.count, bytes[position] != UInt8(ascii: "<") { position += 1 }
                return .text(Self.decodeEntities(bytes[start..<position]))
            }
            if starts(with: "<!--") {
                try skip(past: "-->")
            } else if starts(with: "<![CDATA[") {
                position += 9
                let start = position
                try skip(past: "]]>")
                return .text(String(decoding: bytes[start..<position - 3], as: UTF8.self))
            } else if starts(with: "<?") || starts(with: "<!") {
                try skip(past: ">")
            } else if starts(with: "</") {
                position += 2
                let name = readName()
                try skip(past: ">")
                return .end(name: name)
            } else {
                position += 1
                return try startTag()
            }
        }
        return nil
    }

    private mutating func startTag() throws(ServiceError) -> Token {
        let name = readName()
        guard !name.isEmpty else { throw Self.malformed("a tag without a name") }
        var attributes: [String: String] = [:]
        while true {
            skipSpace()
            guard position < bytes.count else { throw Self.malformed("<\(name) is not closed") }
            if bytes[position] == UInt8(ascii: ">") {
                position += 1
                return .start(name: name, attributes: attributes, selfClosing: false)
            }
            if starts(with: "/>") {
                position += 2
                return .start(name: name, attributes: attributes, selfClosing: true)
            }
            let attribute = readName()
            guard !attribute.isEmpty else { throw Self.malformed("a bad attribute in <\(name)>") }
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else {
                throw Self.malformed("attribute \(attribute) of <\(name)> has no value")
            }
            position += 1
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") else {
                throw Self.malformed("attribute \(attribute) of <\(name)> is not quoted")
            }
            let quote = bytes[position]
            position += 1
            let start = position
            while position < bytes.count, bytes[position] != quote { position += 1 }
            guard position < bytes.count else { throw Self.malformed("attribute \(attribute) of <\(name)> is not closed") }
            attributes[attribute] = Self.decodeEntities(bytes[start..<position])
            position += 1
        }
    }

    private func starts(with prefix: String) -> Bool {
        let prefix = Array(prefix.utf8)
        return bytes.count - position >= prefix.count && bytes[position..<position + prefix.count].elementsEqual(prefix)
    }

    private mutating func skip(past terminator: String) throws(ServiceError) {
        let terminator = Array(terminator.utf8)
        while position < bytes.count {
            if bytes[position] == terminator[0], starts(with: String(decoding: terminator, as: UTF8.self)) {
                position += terminator.count
                return
            }
            position += 1
        }
        throw Self.malformed("missing \(String(decoding: terminator, as: UTF8.self))")
    }

    private mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    /// A name, without its namespace prefix.
    private mutating func readName() -> String {
        let start = position
        while position < bytes.count, !" \t\r\n/>=".utf8.contains(bytes[position]) { position += 1 }
        let name = String(decoding: bytes[start..<position], as: UTF8.self)
        return name.split(separator: ":").last.map(String.init) ?? name
    }

    private static func decodeEntities(_ raw: ArraySlice<UInt8>) -> String {
        let text = String(decoding: raw, as: UTF8.self)
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            guard let semicolon = rest[ampersand...].firstIndex(of: ";") else { break }
            let entity = rest[rest.index(after: ampersand)..<semicolon]
            switch entity {
            case "amp": result += "&"
            case "lt": result += "<"
            case "gt": result += ">"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let code = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16)
                    : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                if let code, let scalar = Unicode.Scalar(code) {
                    result.unicodeScalars.append(scalar)
                } else {
                    result += rest[ampersand...semicolon]
                }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }
}
