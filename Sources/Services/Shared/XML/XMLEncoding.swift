import Model

/// The character encodings ``XMLReader`` reads, and the decoder that turns each into UTF-8.
///
/// The encoding comes from the byte order mark, else from the first bytes (UTF-16 without a
/// mark starts `<\0?\0` or `\0<\0?`), else from the `encoding` of the XML declaration, else it
/// is UTF-8, as XML 1.0 appendix F describes. UTF-8 and UTF-16 (either byte order), ISO-8859-1,
/// ISO-8859-15, windows-1252 and US-ASCII are read; any other declared encoding is
/// `invalid_data` naming it. Bytes that are not valid in their encoding become U+FFFD.
enum XMLEncoding: Equatable {
    case utf8, utf16LittleEndian, utf16BigEndian, latin1, latin9, windows1252

    /// The encoding of a document that starts with `head` (its first bytes, at least the XML
    /// declaration when there is one), and the length of its byte order mark.
    static func detect(_ head: ArraySlice<UInt8>) throws(ServiceError) -> (encoding: XMLEncoding, bom: Int) {
        let bytes = Array(head.prefix(4))
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return (.utf8, 3) }
        if bytes.starts(with: [0xFF, 0xFE, 0, 0]) || bytes.starts(with: [0, 0, 0xFE, 0xFF]) {
            throw ServiceError(.invalidData, "the document is UTF-32, which is not supported (UTF-8 and UTF-16 are)")
        }
        if bytes.starts(with: [0xFF, 0xFE]) { return (.utf16LittleEndian, 2) }
        if bytes.starts(with: [0xFE, 0xFF]) { return (.utf16BigEndian, 2) }
        if bytes.starts(with: [0x3C, 0, 0x3F, 0]) { return (.utf16LittleEndian, 0) }
        if bytes.starts(with: [0, 0x3C, 0, 0x3F]) { return (.utf16BigEndian, 0) }
        guard let declared = declaredName(head) else { return (.utf8, 0) }
        switch declared.lowercased() {
        case "utf-8", "utf8",
             // A declaration of UTF-16 in a document whose bytes are evidently 8-bit.
             "utf-16", "utf16": return (.utf8, 0)
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "cp819", "us-ascii", "ascii":
            return (.latin1, 0)
        case "iso-8859-15", "iso8859-15", "iso_8859-15", "latin9", "latin-9": return (.latin9, 0)
        case "windows-1252", "cp1252", "x-cp1252": return (.windows1252, 0)
        default:
            let shown = declared.count > 40 ? String(declared.prefix(40)) + "…" : declared
            throw ServiceError(.invalidData, "the document's encoding \"\(shown)\" is not supported "
                + "(UTF-8, UTF-16, ISO-8859-1, ISO-8859-15, windows-1252 and US-ASCII are)")
        }
    }

    /// The `encoding` pseudo-attribute of an XML declaration at the start of `head`.
    private static func declaredName(_ head: ArraySlice<UInt8>) -> String? {
        guard head.starts(with: "<?xml".utf8) else { return nil }
        let declaration = head.prefix(512)
        guard let end = declaration.firstIndex(of: UInt8(ascii: ">")) else { return nil }
        let text = Substring(String(decoding: declaration[..<end], as: UTF8.self))
        guard let key = text.firstRange(of: "encoding") else { return nil }
        var rest = text[key.upperBound...].drop { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        let name = rest.dropFirst().prefix { $0 != quote }
        return name.isEmpty ? nil : String(name)
    }
}

/// Turns a document's bytes, given in pieces, into UTF-8; keeps what a piece ends in the middle
/// of (half a UTF-16 unit, the first half of a surrogate pair) for the next one.
struct XMLDecoder {
    let encoding: XMLEncoding
    private var carry: [UInt8] = []
    private var highSurrogate: UInt16?

    init(_ encoding: XMLEncoding) { self.encoding = encoding }

    /// Appends `bytes` decoded to `output`; `final` when no bytes come after them.
    mutating func decode(_ bytes: ArraySlice<UInt8>, into output: inout [UInt8], final: Bool) {
        switch encoding {
        case .utf8: output.append(contentsOf: bytes)
        case .latin1: for byte in bytes { Self.appendUTF8(UInt32(byte), to: &output) }
        case .latin9: for byte in bytes { Self.appendUTF8(Self.latin9(byte), to: &output) }
        case .windows1252: for byte in bytes { Self.appendUTF8(Self.windows1252(byte), to: &output) }
        case .utf16LittleEndian, .utf16BigEndian: decodeUTF16(bytes, into: &output, final: final)
        }
    }

    private mutating func decodeUTF16(_ bytes: ArraySlice<UInt8>, into output: inout [UInt8], final: Bool) {
        var pending = carry
        pending.append(contentsOf: bytes)
        carry = []
        var index = 0
        while index + 1 < pending.count {
            let unit = encoding == .utf16LittleEndian ? UInt16(pending[index]) | UInt16(pending[index + 1]) << 8
                                                      : UInt16(pending[index]) << 8 | UInt16(pending[index + 1])
            index += 2
            if let high = highSurrogate {
                highSurrogate = nil
                if (0xDC00...0xDFFF).contains(unit) {
                    Self.appendUTF8(0x10000 + (UInt32(high - 0xD800) << 10) + UInt32(unit - 0xDC00), to: &output)
                    continue
                }
                Self.appendUTF8(0xFFFD, to: &output)
            }
            switch unit {
            case 0xD800...0xDBFF: highSurrogate = unit
            case 0xDC00...0xDFFF: Self.appendUTF8(0xFFFD, to: &output)
            default: Self.appendUTF8(UInt32(unit), to: &output)
            }
        }
        if index < pending.count { carry = [pending[index]] }
        if final && (highSurrogate != nil || !carry.isEmpty) {
            Self.appendUTF8(0xFFFD, to: &output)
            highSurrogate = nil
            carry = []
        }
    }

    /// Appends code point `value` (a valid scalar: the callers never pass a surrogate) as UTF-8.
    static func appendUTF8(_ value: UInt32, to output: inout [UInt8]) {
        switch value {
        case ..<0x80: output.append(UInt8(value))
        case ..<0x800: output.append(contentsOf: [UInt8(0xC0 | value >> 6), UInt8(0x80 | value & 0x3F)])
        case ..<0x10000:
            output.append(contentsOf: [UInt8(0xE0 | value >> 12), UInt8(0x80 | value >> 6 & 0x3F), UInt8(0x80 | value & 0x3F)])
        default:
            output.append(contentsOf: [UInt8(0xF0 | value >> 18), UInt8(0x80 | value >> 12 & 0x3F),
                                       UInt8(0x80 | value >> 6 & 0x3F), UInt8(0x80 | value & 0x3F)])
        }
    }

    /// ISO-8859-15: Latin-1 with the euro sign and seven letters in place of symbols.
    private static func latin9(_ byte: UInt8) -> UInt32 {
        switch byte {
        case 0xA4: 0x20AC
        case 0xA6: 0x160
        case 0xA8: 0x161
        case 0xB4: 0x17D
        case 0xB8: 0x17E
        case 0xBC: 0x152
        case 0xBD: 0x153
        case 0xBE: 0x178
        default: UInt32(byte)
        }
    }

    /// windows-1252: Latin-1 with printable characters in most of the C1 range (the five
    /// bytes it leaves undefined become U+FFFD).
    private static func windows1252(_ byte: UInt8) -> UInt32 {
        guard (0x80...0x9F).contains(byte) else { return UInt32(byte) }
        return c1Table[Int(byte - 0x80)]
    }

    private static let c1Table: [UInt32] = [
        0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0xFFFD, 0x017D, 0xFFFD,
        0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
    ]
}
