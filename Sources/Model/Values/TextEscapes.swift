/// What JSON and TOML strings share in their escapes: the one-letter escapes both define, and
/// hexadecimal digits for `\u`.
enum TextEscapes {
    /// The character of `\b`, `\t`, `\n`, `\f`, `\r`, `\"` or `\\` given its letter; nil for any
    /// other letter (each format adds its own: JSON's `\/`, the `\u` forms).
    static func shortEscape(_ letter: UInt8) -> Unicode.Scalar? {
        switch letter {
        case UInt8(ascii: "b"): "\u{8}"
        case UInt8(ascii: "t"): "\t"
        case UInt8(ascii: "n"): "\n"
        case UInt8(ascii: "f"): "\u{C}"
        case UInt8(ascii: "r"): "\r"
        case UInt8(ascii: "\""): "\""
        case UInt8(ascii: "\\"): "\\"
        default: nil
        }
    }

    /// The value of a hexadecimal digit, nil for any other byte.
    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte) - 0x30
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte) - 0x61 + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte) - 0x41 + 10
        default: nil
        }
    }
}
