/// Escape sequences: CSI (`ESC [`), SS3 (`ESC O`) and Alt plus a key (`ESC` then the key).
extension KeyDecoder {
    enum EscapeResult {
        /// A key and the bytes it took.
        case key(Key, length: Int)
        /// `ESC [200~`: a bracketed paste begins after these bytes.
        case pasteStart(length: Int)
        /// A well-formed sequence this decoder does not map (mouse, reports).
        case ignored(length: Int)
        /// More bytes are needed to tell.
        case incomplete
        /// The start of what is dropped up to its end, which has not come in these bytes.
        case skip(Skipping, length: Int)
    }

    /// How far ``skip(_:from:)`` got.
    enum SkipProgress {
        /// The end came; decoding goes on at this index.
        case finished(end: Int)
        /// Everything up to this index was dropped; the end has not come.
        case waiting(consumed: Int)
    }

    /// The longest CSI sequence accepted; longer runs of parameter bytes are garbage.
    private static let longestSequence = 32

    /// The bytes after Esc that begin a sequence or string whose end is looked for: CSI, and the
    /// control strings OSC (`]`), DCS (`P`), SOS (`X`), PM (`^`) and APC (`_`).
    static let sequenceStarts: Set<UInt8> = Set("[]PX^_".utf8)
    /// The control strings' introducers.
    private static let stringStarts: Set<UInt8> = Set("]PX^_".utf8)

    /// The sequence starting with the Esc at `index`.
    func parseEscape(at index: Int) -> EscapeResult {
        guard index + 1 < pending.count else { return .incomplete }
        let next = pending[index + 1]
        // A control string: what the terminal answers to a query (colours, its version, a
        // setting), never keys, though its letters would be (`ESC P q e ESC \` quitted). Esc then
        // `]` or `P` with nothing after may still be Alt and that key: ``flush()`` decides.
        if KeyDecoder.stringStarts.contains(next) {
            guard index + 2 < pending.count else { return .incomplete }
            switch skip(.controlString, from: index + 2) {
            case .finished(let end): return .ignored(length: end - index)
            case .waiting(let consumed): return .skip(.controlString, length: consumed - index)
            }
        }
        switch next {
        case UInt8(ascii: "["):
            return parseCSI(at: index)
        case UInt8(ascii: "O"):
            guard index + 2 < pending.count else { return .incomplete }
            return KeyDecoder.ss3Key(pending[index + 2]).map { .key($0, length: 3) } ?? .ignored(length: 3)
        case KeyDecoder.escape:
            // Esc Esc [ C: some terminals (macOS Terminal) send Alt-arrows this way.
            switch parseEscape(at: index + 1) {
            case .key(.key(let name, let modifiers), let length):
                return .key(.key(name, modifiers: modifiers.union(.alt)), length: length + 1)
            case .incomplete:
                return .incomplete
            default:
                return .key(.key(.escape), length: 1)
            }
        case 0x7F, 0x08:
            return .key(.key(.backspace, modifiers: .alt), length: 2)
        case 0x0D, 0x0A:
            return .key(.key(.enter, modifiers: .alt), length: 2)
        case 0x09:
            return .key(.key(.tab, modifiers: .alt), length: 2)
        case 0x00..<0x20:
            return .key(KeyDecoder.controlKey(next), length: 2)  // Ctrl-Alt-x: the Ctrl key
        case 0x20..<0x7F:
            return .key(.alt(Character(UnicodeScalar(next))), length: 2)
        default:
            switch decodeUTF8(at: index + 1) {
            case .incomplete: return .incomplete
            case .invalid: return .key(.key(.escape), length: 1)
            case .character(let scalar, let length): return .key(.alt(Character(scalar)), length: length + 1)
            }
        }
    }

    /// Drops the bytes of `kind` from `index` up to its end: BEL or ST (`ESC \`) for a control
    /// string (another Esc cancels it), the final byte for a sequence. An Esc at the very end
    /// may begin ST and is kept. A byte that cannot be in a sequence ends one too (it was
    /// malformed) and is decoded.
    func skip(_ kind: Skipping, from index: Int) -> SkipProgress {
        var position = index
        while position < pending.count {
            let byte = pending[position]
            switch kind {
            case .controlString:
                if byte == 0x07 { return .finished(end: position + 1) }
                if byte == KeyDecoder.escape {
                    guard position + 1 < pending.count else { return .waiting(consumed: position) }
                    // ST ends the string; Esc before anything else cancels it (as a terminal's
                    // own parser does) and begins what follows.
                    return .finished(end: pending[position + 1] == UInt8(ascii: "\\") ? position + 2 : position)
                }
            case .longSequence:
                if (0x40...0x7E).contains(byte) { return .finished(end: position + 1) }
                if !(0x20...0x3F).contains(byte) { return .finished(end: position) }
            }
            position += 1
        }
        return .waiting(consumed: position)
    }

    /// `ESC [ parameters intermediates final`.
    private func parseCSI(at index: Int) -> EscapeResult {
        var position = index + 2
        while position < pending.count {
            let byte = pending[position]
            switch byte {
            case 0x20...0x3F:
                position += 1
                // Past any real key's length: dropped up to its final byte, which would
                // otherwise be read as a key (`ESC [` then 5,000 parameters then `A` was `A`).
                if position - index > KeyDecoder.longestSequence {
                    switch skip(.longSequence, from: position) {
                    case .finished(let end): return .ignored(length: end - index)
                    case .waiting(let consumed): return .skip(.longSequence, length: consumed - index)
                    }
                }
            case 0x40...0x7E:
                let parameters = String(decoding: pending[(index + 2)..<position], as: UTF8.self)
                let length = position + 1 - index
                if byte == UInt8(ascii: "~") && parameters == "200" { return .pasteStart(length: length) }
                return KeyDecoder.csiKey(parameters: parameters, final: byte).map { .key($0, length: length) }
                    ?? .ignored(length: length)
            default:
                return .ignored(length: position - index)  // malformed: drop what came before
            }
        }
        return .incomplete
    }

    /// The key for a CSI sequence: `ESC [ 1 ; 5 C` is Ctrl-Right, `ESC [ 3 ~` Delete, and
    /// `ESC [ < 0 ; 12 ; 5 M` a left click at column 12, row 5.
    static func csiKey(parameters: String, final: UInt8) -> Key? {
        if parameters.hasPrefix("<"), final == UInt8(ascii: "M") || final == UInt8(ascii: "m") {
            return mouseKey(parameters.dropFirst(), pressed: final == UInt8(ascii: "M"))
        }
        let numbers = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
        let modifiers = numbers.count > 1 ? modifiers(numbers[1] ?? 1) : []
        let name: Key.Name
        switch final {
        case UInt8(ascii: "A"): name = .up
        case UInt8(ascii: "B"): name = .down
        case UInt8(ascii: "C"): name = .right
        case UInt8(ascii: "D"): name = .left
        case UInt8(ascii: "H"): name = .home
        case UInt8(ascii: "F"): name = .end
        case UInt8(ascii: "Z"): name = .backTab
        // xterm's F1, F2 and F4 with modifiers (ESC [ 1 ; 5 P). Not F3's `R`: that is also the
        // reply to a cursor position request (ESC [ row ; column R).
        case UInt8(ascii: "P") where numbers.first ?? 1 == 1: name = .function(1)
        case UInt8(ascii: "Q") where numbers.first ?? 1 == 1: name = .function(2)
        case UInt8(ascii: "S") where numbers.first ?? 1 == 1: name = .function(4)
        case UInt8(ascii: "a"): return .key(.up, modifiers: .shift)  // rxvt
        case UInt8(ascii: "b"): return .key(.down, modifiers: .shift)
        case UInt8(ascii: "c"): return .key(.right, modifiers: .shift)
        case UInt8(ascii: "d"): return .key(.left, modifiers: .shift)
        case UInt8(ascii: "~"), UInt8(ascii: "^"), UInt8(ascii: "$"), UInt8(ascii: "@"):
            switch numbers.first ?? nil {
            case 1, 7: name = .home
            case 2: name = .insert
            case 3: name = .delete
            case 4, 8: name = .end
            case 5: name = .pageUp
            case 6: name = .pageDown
            case let number? where functionKeys[number] != nil: name = .function(functionKeys[number] ?? 0)
            default: return nil
            }
            // rxvt marks Ctrl with ^, Shift with $, both with @.
            let rxvt: Key.Modifiers = switch final {
            case UInt8(ascii: "^"): .control
            case UInt8(ascii: "$"): .shift
            case UInt8(ascii: "@"): [.control, .shift]
            default: []
            }
            return .key(name, modifiers: modifiers.union(rxvt))
        default:
            return nil
        }
        return .key(name, modifiers: modifiers)
    }

    /// VT220's numbers for F1 to F12 (`ESC [ 15 ~` is F5; 16 and 22 are skipped).
    private static let functionKeys: [Int: Int] = [
        11: 1, 12: 2, 13: 3, 14: 4, 15: 5, 17: 6, 18: 7, 19: 8, 20: 9, 21: 10, 23: 11, 24: 12,
    ]

    /// The key for `ESC O x` (application cursor mode; rxvt's Ctrl-arrows in lowercase).
    static func ss3Key(_ final: UInt8) -> Key? {
        switch final {
        case UInt8(ascii: "A"): return .key(.up)
        case UInt8(ascii: "B"): return .key(.down)
        case UInt8(ascii: "C"): return .key(.right)
        case UInt8(ascii: "D"): return .key(.left)
        case UInt8(ascii: "H"): return .key(.home)
        case UInt8(ascii: "F"): return .key(.end)
        case UInt8(ascii: "a"): return .key(.up, modifiers: .control)
        case UInt8(ascii: "b"): return .key(.down, modifiers: .control)
        case UInt8(ascii: "c"): return .key(.right, modifiers: .control)
        case UInt8(ascii: "d"): return .key(.left, modifiers: .control)
        case UInt8(ascii: "P"): return .key(.function(1))
        case UInt8(ascii: "Q"): return .key(.function(2))
        case UInt8(ascii: "R"): return .key(.function(3))
        case UInt8(ascii: "S"): return .key(.function(4))
        default: return nil
        }
    }

    /// An SGR mouse report's `button;column;row`: the low two bits are the button, 64 marks the
    /// wheel, 32 a motion (dropped), 4/8/16 the modifiers (ignored).
    private static func mouseKey(_ parameters: Substring, pressed: Bool) -> Key? {
        let numbers = parameters.split(separator: ";").compactMap { Int($0) }
        guard numbers.count == 3, numbers[0] & 32 == 0 else { return nil }
        let code = numbers[0]
        let action: MouseEvent.Action
        if code & 64 != 0 {
            guard pressed else { return nil }
            action = code & 1 == 0 ? .wheelUp : .wheelDown
        } else {
            action = pressed ? .press(button: code & 3) : .release(button: code & 3)
        }
        return .mouse(MouseEvent(action: action, column: numbers[1], row: numbers[2]))
    }

    /// xterm's modifier parameter: 1 + (Shift 1 | Alt 2 | Ctrl 4 | Meta 8).
    private static func modifiers(_ parameter: Int) -> Key.Modifiers {
        let bits = max(parameter - 1, 0)
        var modifiers: Key.Modifiers = []
        if bits & 1 != 0 { modifiers.insert(.shift) }
        if bits & (2 | 8) != 0 { modifiers.insert(.alt) }
        if bits & 4 != 0 { modifiers.insert(.control) }
        return modifiers
    }
}
