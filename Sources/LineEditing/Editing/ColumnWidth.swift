/// How many terminal columns a character takes, and what the line editor writes to show it.
///
/// Wide East Asian characters and emoji (including ZWJ sequences, flags and keycaps, which are one
/// `Character` each) take two columns, combining marks and zero-width characters none, everything
/// else one. Characters a terminal would act on instead of showing get a visible stand-in: a tab is
/// drawn as four spaces, other control characters in caret notation (`^A`), so the cursor column
/// computed here is the one the terminal shows.
///
/// ```swift
/// ColumnWidth.of("a")          // 1
/// ColumnWidth.of("語")         // 2
/// ColumnWidth.of("👩‍👩‍👧")        // 2 (one grapheme cluster)
/// ColumnWidth.of("e\u{301}")   // 1 (e + combining acute)
/// ColumnWidth.of("héllo 世界")  // 10
/// ```
public enum ColumnWidth {
    /// The columns a tab takes; the editor draws it as this many spaces.
    public static let tabWidth = 4

    /// The columns `text` takes once drawn by ``glyph(for:)``. A newline counts zero.
    public static func of(_ text: some Sequence<Character>) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The columns one grapheme cluster takes once drawn by ``glyph(for:)``.
    public static func of(_ character: Character) -> Int {
        if let ascii = character.asciiValue {
            switch ascii {
            case 0x09: return tabWidth
            case 0x0A: return 0
            case 0x20..<0x7F: return 1
            default: return 2  // ^X
            }
        }
        var widest = 0
        for scalar in character.unicodeScalars {
            if scalar.properties.isEmojiPresentation { return 2 }
            widest = max(widest, width(of: scalar))
        }
        // An emoji presentation selector turns a text-style symbol (☺, 1) into a two-column emoji.
        if character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        return widest
    }

    /// What to write to the terminal to show `character`: itself, or its visible stand-in.
    ///
    /// A newline has no glyph: the renderer turns it into a line break.
    public static func glyph(for character: Character) -> String {
        guard let ascii = character.asciiValue else {
            if let first = character.unicodeScalars.first, (0x80...0x9F).contains(first.value) {
                return "\u{FFFD}"  // a C1 control; ColumnWidth.of counts it as one column
            }
            return String(character)
        }
        switch ascii {
        case 0x09: return String(repeating: " ", count: tabWidth)
        case 0x0A: return ""
        case 0x20..<0x7F: return String(character)
        case 0x7F: return "^?"
        default: return "^" + String(UnicodeScalar(ascii + 0x40))
        }
    }

    private static func width(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if (0x80...0x9F).contains(value) { return 1 }  // shown as U+FFFD
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        if value == 0x200B { return 0 }
        return isWide(value) ? 2 : 1
    }

    /// East Asian Wide and Fullwidth ranges (Unicode 15, the blocks that matter in practice).
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3,
             0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB,
             0x26BD...0x26BE, 0x26C4...0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA,
             0x26FD, 0x2705, 0x270A...0x270B, 0x2728, 0x274C, 0x274E, 0x2753...0x2755, 0x2757,
             0x2795...0x2797, 0x27B0, 0x27BF, 0x2B1B...0x2B1C, 0x2B50, 0x2B55,
             0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF,
             0x1F004, 0x1F0CF, 0x1F18E, 0x1F191...0x1F19A, 0x1F200...0x1F251, 0x1F300...0x1F64F,
             0x1F680...0x1F6FF, 0x1F7E0...0x1F7EB, 0x1F90C...0x1F9FF, 0x1FA70...0x1FAFF,
             0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
