/// The history file format: UTF-8, one entry per line, oldest first. Inside an entry a backslash
/// is written `\\`, a newline `\n` and a carriage return `\r`, so a multi-line entry stays one line
/// and comes back whole.
///
/// Reading is forgiving: a line that is not valid UTF-8 or holds a NUL byte is skipped, an unknown
/// escape or a trailing lone backslash is kept as written, a `\r` before the line break (a file
/// edited on Windows) is dropped, blank lines are skipped.
///
/// ```swift
/// HistoryFile.encode(["a\nb", #"c\d"#])   // "a\\nb\nc\\\\d\n"
/// HistoryFile.decode(Array("a\\nb\n".utf8)) // ["a\nb"]
/// ```
extension HistoryFile {
    /// The file contents for `entries`.
    public static func encode(_ entries: [String]) -> String {
        var text = ""
        for entry in entries {
            for scalar in entry.unicodeScalars {
                switch scalar {
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                default: text.unicodeScalars.append(scalar)
                }
            }
            text += "\n"
        }
        return text
    }

    /// The entries in a file's bytes, skipping what cannot be read.
    public static func decode(_ bytes: [UInt8]) -> [String] {
        var entries: [String] = []
        for var line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard !line.isEmpty, !line.contains(0) else { continue }
            let text = String(decoding: line, as: UTF8.self)
            guard text.utf8.elementsEqual(line) else { continue }  // not valid UTF-8: repaired
            entries.append(unescape(text))
        }
        return entries
    }

    private static func unescape(_ line: String) -> String {
        guard line.contains("\\") else { return line }
        var result = String.UnicodeScalarView()
        var escaping = false
        for scalar in line.unicodeScalars {
            if escaping {
                escaping = false
                switch scalar {
                case "n": result.append("\n")
                case "r": result.append("\r")
                case "\\": result.append("\\")
                default: result.append("\\"); result.append(scalar)
                }
            } else if scalar == "\\" {
                escaping = true
            } else {
                result.append(scalar)
            }
        }
        if escaping { result.append("\\") }
        return String(result)
    }
}
