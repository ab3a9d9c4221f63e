/// Splits a command line into words as a shell does: spaces separate words, single quotes keep
/// everything literally, double quotes keep spaces (with `\"` and `\\` escaped), and a backslash
/// outside quotes escapes the next character.
///
/// ```swift
/// try CommandWords.split(#"add "oat milk" 2"#)   // ["add", "oat milk", "2"]
/// ```
public enum CommandWords {
    /// Why a line could not be split.
    public struct Unterminated: Error, CustomStringConvertible {
        public let description: String
    }

    public static func split(_ line: String) throws(Unterminated) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
                inWord = true
                continue
            }
            switch (quote, character) {
            case ("'", "'"), ("\"", "\""):
                quote = nil
            case ("'", _):
                current.append(character)
            case ("\"", "\\"), (nil, "\\"):
                escaped = true
            case ("\"", _):
                current.append(character)
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case (nil, _) where character.isWhitespace:
                if inWord { words.append(current) }
                current = ""
                inWord = false
            default:
                current.append(character)
                inWord = true
            }
        }
        if let quote { throw Unterminated(description: "unterminated \(quote) quote") }
        if escaped { throw Unterminated(description: "a backslash at the end of the line") }
        if inWord { words.append(current) }
        return words
    }
}
