/// Text built one scalar at a time, kept as UTF-8 bytes and made a `String` once at the end.
///
/// `String.UnicodeScalarView.append` re-checks the string's storage on every call (a few hundred
/// instructions a scalar), and every plugin manifest is parsed at start-up, scalar by scalar.
struct ScalarBuffer {
    private var bytes: [UInt8] = []

    /// Appends `scalar`, encoded as UTF-8.
    mutating func append(_ scalar: Unicode.Scalar) {
        let value = scalar.value
        switch value {
        case ..<0x80:
            bytes.append(UInt8(value))
        case ..<0x800:
            bytes.append(0xC0 | UInt8(value >> 6))
            bytes.append(0x80 | UInt8(value & 0x3F))
        case ..<0x1_0000:
            bytes.append(0xE0 | UInt8(value >> 12))
            bytes.append(0x80 | UInt8(value >> 6 & 0x3F))
            bytes.append(0x80 | UInt8(value & 0x3F))
        default:
            bytes.append(0xF0 | UInt8(value >> 18))
            bytes.append(0x80 | UInt8(value >> 12 & 0x3F))
            bytes.append(0x80 | UInt8(value >> 6 & 0x3F))
            bytes.append(0x80 | UInt8(value & 0x3F))
        }
    }

    /// Appends `scalar` `count` times.
    mutating func append(_ scalar: Unicode.Scalar, count: Int) {
        for _ in 0..<count { append(scalar) }
    }

    /// The text appended so far.
    var string: String { String(decoding: bytes, as: UTF8.self) }
}
