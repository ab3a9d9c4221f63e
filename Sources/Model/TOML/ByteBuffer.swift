/// Text built a piece at a time, kept as UTF-8 bytes and made a `String` once at the end.
///
/// `String.UnicodeScalarView.append` re-checks the string's storage on every call, for every
/// scalar, and every plugin manifest is read at start-up. Only strings with
/// escapes and multi-line strings are built this way; others are taken from the document whole.
struct ByteBuffer {
    private var bytes: [UInt8] = []

    /// Appends one byte of the document (a whole character, or part of one whose other bytes
    /// follow).
    mutating func append(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends `byte` `count` times.
    mutating func append(_ byte: UInt8, count: Int) {
        for _ in 0..<count { bytes.append(byte) }
    }

    /// Appends `scalar`, encoded as UTF-8 (what an escape stands for).
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

    /// The text appended so far.
    var string: String { String(decoding: bytes, as: UTF8.self) }
}
