/// Bytes that should be text but need not be (a file name on Linux, a Lua string) as text a
/// person can read: UTF-8 as it is, each byte that is not part of valid UTF-8 as `\xFF`, the
/// escape Lua reads back. Two names that differ only in such bytes stay different, where a
/// lossy decoding made both U+FFFD, or dropped the name.
package enum ByteText {
    /// `bytes` as text, each byte outside valid UTF-8 written `\xFF`.
    package static func shown(_ bytes: some Collection<UInt8>) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        let bytes = Array(bytes)
        var shown = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        parsing: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                shown.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                offset += encoded.count
            case .error(let length):
                for byte in bytes[offset..<(offset + length)] {
                    shown += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
                offset += length
            case .emptyInput:
                break parsing
            }
        }
        return shown
    }
}
