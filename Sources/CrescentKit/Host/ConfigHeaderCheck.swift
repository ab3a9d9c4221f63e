/// Finds what the TOML parser crashes on rather than reporting an error, so the config file is
/// checked for it first: a table header whose name starts with a character TOML does not allow
/// there (`[café]`, `[\u{1}`), on which the parser asserts, and a dotted key of very many parts
/// (`a.a.a... = 1`), whose tables the parser builds and frees by recursion.
///
/// A small scanner: it skips strings (basic, literal and multi-line) and comments, follows
/// brackets and braces, looks at each `[` or `[[` that starts a line at the top level, and counts
/// the dots of each key.
enum ConfigHeaderCheck {
    /// What is wrong, found at a 1-based line.
    enum Problem: Equatable {
        case badHeaderStart(Unicode.Scalar)
        case tooManyKeyParts
    }

    /// The most dots a key (or a table header) may hold.
    static let maxKeyDots = 100

    /// The 1-based line of the first problem, or nil.
    static func firstProblem(in text: String) -> (line: Int, problem: Problem)? {
        // Scalars, not characters: a combining mark after `[` would join it into one character.
        let characters = Array(text.unicodeScalars)
        var index = 0, line = 1
        var atLineStart = true
        // The open brackets and braces; a key is read at the top level or right inside a brace.
        var open: [Unicode.Scalar] = []
        var inKey = true, keyDots = 0
        func peek(_ offset: Int) -> Unicode.Scalar? { index + offset < characters.count ? characters[index + offset] : nil }
        while index < characters.count {
            let character = characters[index]
            if character == "\n" {
                line += 1
                atLineStart = true
                if open.isEmpty { inKey = true; keyDots = 0 }
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
            case "[" where open.isEmpty && startsLine:
                index += peek(1) == "[" ? 2 : 1
                while let next = peek(0), next == " " || next == "\t" { index += 1 }
                guard let first = peek(0) else { return nil }
                guard isBareKeyCharacter(first) || first == "\"" || first == "'" else { return (line, .badHeaderStart(first)) }
                // The rest of the header line is the parser's to check, but for its dots.
                var dots = 0, quote: Unicode.Scalar?
                while index < characters.count && characters[index] != "\n" && (quote != nil || characters[index] != "#") {
                    let current = characters[index]
                    if let open = quote { if current == open { quote = nil } } else if current == "\"" || current == "'" { quote = current } else if current == "." { dots += 1 }
                    index += 1
                }
                if dots > maxKeyDots { return (line, .tooManyKeyParts) }
                inKey = false
            case "[", "{":
                open.append(character)
                inKey = character == "{"
                keyDots = 0
                index += 1
            case "]", "}":
                _ = open.popLast()
                index += 1
            case "," where open.last == "{":
                inKey = true
                keyDots = 0
                index += 1
            case "=":
                inKey = false
                index += 1
            case "." where inKey:
                keyDots += 1
                if keyDots > maxKeyDots { return (line, .tooManyKeyParts) }
                index += 1
            default:
                index += 1
            }
        }
        return nil
    }

    /// A character a bare key may hold: ASCII letters, digits, `_` and `-`.
    static func isBareKeyCharacter(_ character: Unicode.Scalar) -> Bool {
        guard character.isASCII else { return false }
        let ascii = UInt8(character.value)
        return (ascii >= 0x41 && ascii <= 0x5A) || (ascii >= 0x61 && ascii <= 0x7A) || (ascii >= 0x30 && ascii <= 0x39)
            || ascii == 0x5F || ascii == 0x2D
    }
}
