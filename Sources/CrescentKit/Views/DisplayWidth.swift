/// How many terminal columns text takes: wide East Asian characters and emoji take two,
/// combining marks and zero-width characters none, everything else one.
enum DisplayWidth {
    /// The columns `text` takes.
    static func of(_ text: String) -> Int {
        var width = 0
        for character in text { width += of(character) }
        return width
    }

    /// The columns one grapheme cluster takes (an emoji sequence counts once).
    static func of(_ character: Character) -> Int {
        if character.isASCII { return character == "\t" ? 4 : (character.asciiValue.map { $0 >= 0x20 && $0 != 0x7F } == true ? 1 : 0) }
        var widest = 0
        for scalar in character.unicodeScalars {
            widest = max(widest, of(scalar))
            if scalar.properties.isEmojiPresentation { return 2 }
        }
        if character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) { return 2 }  // emoji presentation selector
        return widest
    }

    private static func of(_ scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        let value = scalar.value
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

    /// `text` cut to at most `width` columns, ending in `…` when something was cut.
    static func truncate(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        if text.utf8.count <= width && text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        guard of(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let next = of(character)
            if used + next > width - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }

    /// `text` padded with spaces to `width` columns, on the right (or the left for `.right`).
    static func pad(_ text: String, to width: Int, alignRight: Bool = false) -> String {
        let missing = width - of(text)
        guard missing > 0 else { return text }
        let spaces = String(repeating: " ", count: missing)
        return alignRight ? spaces + text : text + spaces
    }

    /// `text` fitted to exactly `width` columns: truncated or padded.
    static func fit(_ text: String, to width: Int, alignRight: Bool = false) -> String {
        pad(truncate(text, to: width), to: width, alignRight: alignRight)
    }
}
