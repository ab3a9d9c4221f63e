/// A byte the terminal sent that belongs to no UTF-8 character (`0xFF`, or `0xC3` cut from its
/// continuation), kept in typed text as a stand-in scalar from the last private-use plane:
/// U+10FF80 to U+10FFFF stand for the bytes 0x80 to 0xFF (ASCII bytes are always text).
///
/// Mature line editors keep such bytes rather than drop them: readline and zsh keep the bytes
/// themselves, fish keeps them as private-use stand-ins as here, and each shows them escaped.
/// Dropped, they vanished without a word and the words after them shifted (`add \xFF 7` ran
/// `add("7")`). Kept, the line shows them (`\xFF`), one Backspace deletes one, and what takes
/// the line decides: the command line refuses to run text that is not text, naming the word.
/// A person who types one of these 128 private-use characters themselves gets the same answer.
///
/// ```swift
/// let line = "caf" + String(UndecodedByte.scalar(for: 0xC3))
/// UndecodedByte.escaped(line)   // "caf\\xC3"
/// ```
public enum UndecodedByte {
    private static let base: UInt32 = 0x10FF00

    /// The stand-in for `byte` (0x80 to 0xFF).
    public static func scalar(for byte: UInt8) -> Unicode.Scalar {
        // 0x10FF80...0x10FFFF are scalar values (none is a surrogate).
        Unicode.Scalar(base + UInt32(byte)) ?? "\u{FFFD}"
    }

    /// The byte `scalar` stands for, or nil for a scalar that is text.
    public static func byte(of scalar: Unicode.Scalar) -> UInt8? {
        scalar.value >= base + 0x80 && scalar.value <= base + 0xFF ? UInt8(scalar.value - base) : nil
    }

    /// Whether `text` holds a stand-in.
    public static func isIn(_ text: some StringProtocol) -> Bool {
        text.unicodeScalars.contains { byte(of: $0) != nil }
    }

    /// `text` with each stand-in written as `\xFF`: how a line shows the bytes it kept.
    public static func escaped(_ text: some StringProtocol) -> String {
        guard isIn(text) else { return String(text) }
        var shown = ""
        for scalar in text.unicodeScalars {
            if let byte = byte(of: scalar) {
                shown += "\\x" + String(byte, radix: 16, uppercase: true)
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// `bytes` as text, each byte that belongs to no UTF-8 character as its stand-in (where
    /// `String(decoding:as:)` puts U+FFFD, which cannot be told from a typed one).
    public static func text(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        var text = ""
        var index = 0
        while index < bytes.count {
            if case .character(let scalar, let length) = KeyDecoder.utf8(in: bytes, at: index) {
                text.unicodeScalars.append(scalar)
                index += length
            } else {
                text.unicodeScalars.append(bytes[index] < 0x80 ? Unicode.Scalar(bytes[index]) : scalar(for: bytes[index]))
                index += 1
            }
        }
        return text
    }
}
