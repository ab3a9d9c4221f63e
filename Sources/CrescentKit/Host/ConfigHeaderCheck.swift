/// Finds the table headers of a TOML text whose name starts with a character TOML does not allow
/// there (`[café]`, `[\u{1}`): the TOML parser asserts on them rather than reporting an error, so
/// the config file is checked for them first.
///
/// A small scanner: it skips strings (basic, literal and multi-line), comments and the values
/// between brackets and braces, and looks at each `[` or `[[` that starts a line at the top level.
enum ConfigHeaderCheck {
    /// The 1-based line of the first bad header and the character found, or nil.
    static func firstBadHeader(in text: String) -> (line: Int, found: Character)? {
        let characters = Array(text)
        var index = 0, line = 1, depth = 0
        var atLineStart = true
        func peek(_ offset: Int) -> Character? { index + offset < characters.count ? characters[index + offset] : nil }
        while index < characters.count {
            let character = characters[index]
            if character == "\n" {
                line += 1
                atLineStart = true
                index += 1
                continue
            }
            if character == " " || character == "\t" || character == "\r" {
                index += 1
                continue
            }
            let startsLine = atLineStart
            atLineStart = false
            switch character {
            case "#":
                while index < characters.count && characters[index] != "\n" { index += 1 }
            case "\"", "'":
                let triple = peek(1) == character && peek(2) == character
                index += triple ? 3 : 1
                while index < characters.count {
                    let current = characters[index]
                    if current == "\\" && character == "\"" { index += 2; continue }
                    if current == "\n" {
                        // A single-line string ends at the line's end (the parser reports it).
                        if !triple { break }
                        line += 1
                    }
                    if current == character && (!triple || (peek(1) == character && peek(2) == character)) {
                        index += triple ? 3 : 1
                        break
                    }
                    index += 1
                }
            case "[" where depth == 0 && startsLine:
                index += peek(1) == "[" ? 2 : 1
                while let next = peek(0), next == " " || next == "\t" { index += 1 }
                guard let first = peek(0) else { return nil }
                guard isBareKeyCharacter(first) || first == "\"" || first == "'" else { return (line, first) }
                // The rest of the header line is the parser's to check.
                while index < characters.count && characters[index] != "\n" && characters[index] != "#" { index += 1 }
            case "[", "{":
                depth += 1
                index += 1
            case "]", "}":
                depth = max(0, depth - 1)
                index += 1
            default:
                index += 1
            }
        }
        return nil
    }

    /// A character a bare key may hold: ASCII letters, digits, `_` and `-`.
    static func isBareKeyCharacter(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue else { return false }
        return (ascii >= 0x41 && ascii <= 0x5A) || (ascii >= 0x61 && ascii <= 0x7A) || (ascii >= 0x30 && ascii <= 0x39)
            || ascii == 0x5F || ascii == 0x2D
    }
}
