/// Turns the bytes a raw-mode terminal sends into ``Key`` events, incrementally.
///
/// Feed it whatever each `read(2)` returned; anything incomplete at the end (half a UTF-8
/// character, a lone Esc, half an escape sequence, an unfinished bracketed paste) is kept for the
/// next call. It understands printable UTF-8 text, control keys, xterm's CSI and SS3 sequences for
/// arrows, Home/End, Insert/Delete, Page Up/Down, F1 to F12 (with their Shift/Alt/Ctrl modifiers, and rxvt's
/// variants), Alt plus a key sent as Esc then the key, and bracketed paste (`ESC [200~ … ESC [201~`,
/// enabled by `ESC [?2004h`), returned as one ``Key/paste(_:)``, and SGR mouse reports (clicks and
/// the wheel, as ``Key/mouse(_:)``). Unknown sequences are consumed and dropped; bytes that are
/// not UTF-8 are dropped, or kept as ``UndecodedByte`` stand-ins (``InvalidBytes/kept``).
///
/// A lone Esc cannot be told from the start of a sequence until more bytes come or none do:
/// when ``isAwaitingMoreBytes`` is true after a read, call ``flush()`` if nothing more arrives
/// within a short time (50 ms is plenty on a local terminal, as vim's `ttimeoutlen`).
///
/// ```swift
/// var decoder = KeyDecoder()
/// decoder.decode([0xE4, 0xB8])                // [] : waiting for the rest of "世"
/// decoder.decode([0x96, 0x0D])                // [.text("世"), .key(.enter)]
/// decoder.decode([0x1B])                      // [] and decoder.isAwaitingMoreBytes
/// decoder.flush()                             // [.key(.escape)]
/// ```
public struct KeyDecoder: Hashable, Sendable {
    /// Bytes not decoded yet.
    private(set) var pending: [UInt8] = []
    /// The text of a bracketed paste being received, or nil outside one.
    private var paste: [UInt8]?
    /// A sequence being dropped whose end has not come: its bytes are never keys.
    private var skipping: Skipping?

    /// What is being dropped up to its end.
    enum Skipping: Hashable, Sendable {
        /// An OSC, DCS, SOS, PM or APC string (a terminal's answer to a query: `ESC ] 11;rgb:… ESC \`),
        /// up to BEL or ST (`ESC \`).
        case controlString
        /// A CSI sequence past ``longestSequence`` parameter bytes, up to its final byte.
        case longSequence
    }

    static let escape: UInt8 = 0x1B
    static let pasteEnd: [UInt8] = Array("\u{1B}[201~".utf8)

    /// What becomes of bytes that belong to no UTF-8 character.
    public enum InvalidBytes: Hashable, Sendable {
        /// Dropped.
        case dropped
        /// Kept in the text as ``UndecodedByte`` stand-ins, typed or pasted: a line that
        /// takes them can show them and refuse them.
        case kept
    }

    private var invalidBytes = InvalidBytes.dropped

    /// A decoder with nothing pending.
    public init() {}

    /// A decoder with nothing pending that treats bytes that are not UTF-8 as `invalidBytes` says.
    public init(invalidBytes: InvalidBytes) {
        self.invalidBytes = invalidBytes
    }

    /// Whether an incomplete sequence outside a paste is waiting: call ``flush()`` if no byte comes
    /// within a short timeout.
    public var isAwaitingMoreBytes: Bool { paste == nil && (!pending.isEmpty || skipping != nil) }

    /// Decodes `bytes` after whatever was pending and returns the complete events, in order.
    public mutating func decode(_ bytes: some Sequence<UInt8>) -> [Key] {
        pending.append(contentsOf: bytes)
        var keys: [Key] = []
        var text = ""
        func emit(_ key: Key) {
            if !text.isEmpty { keys.append(.text(text)); text = "" }
            keys.append(key)
        }
        var index = 0
        decoding: while index < pending.count {
            if paste != nil {
                switch collectPaste(from: index) {
                case .finished(let end):
                    emit(.paste(pastedText()))
                    index = end
                    continue decoding
                case .waiting(let consumed):
                    index = consumed
                    break decoding
                }
            }
            if let kind = skipping {
                switch skip(kind, from: index) {
                case .finished(let end):
                    skipping = nil
                    index = end
                    continue decoding
                case .waiting(let consumed):
                    index = consumed
                    break decoding
                }
            }
            let byte = pending[index]
            switch byte {
            case KeyDecoder.escape:
                switch parseEscape(at: index) {
                case .incomplete: break decoding
                case .key(let key, let length): emit(key); index += length
                case .pasteStart(let length): paste = []; index += length
                case .ignored(let length): index += length
                case .skip(let kind, let length): skipping = kind; index += length
                }
            case 0x0D where index + 1 < pending.count && pending[index + 1] == 0x0A:
                emit(.key(.enter))  // CR LF from one keypress (or an unbracketed paste)
                index += 2
            case 0x00..<0x20, 0x7F:
                emit(KeyDecoder.controlKey(byte))
                index += 1
            case 0x20..<0x7F:
                text.unicodeScalars.append(UnicodeScalar(byte))
                index += 1
            default:
                switch decodeUTF8(at: index) {
                case .incomplete: break decoding
                case .invalid:
                    if invalidBytes == .kept { text.unicodeScalars.append(UndecodedByte.scalar(for: byte)) }
                    index += 1
                case .character(let scalar, let length):
                    if !(0x80...0x9F).contains(scalar.value) { text.unicodeScalars.append(scalar) }
                    index += length
                }
            }
        }
        pending.removeFirst(min(index, pending.count))
        if !text.isEmpty { keys.append(.text(text)) }
        return keys
    }

    /// Whether a bracketed paste has begun and its end has not arrived.
    public var isInPaste: Bool { paste != nil }

    /// Gives up waiting for a paste's end (a terminal or connection that lost it): what arrived
    /// is the paste, and the decoder reads keys again. Else a paste start without its end took
    /// every later byte as text, Ctrl-C included, for ever.
    public mutating func endPaste() -> [Key] {
        guard paste != nil else { return [] }
        paste?.append(contentsOf: pending)
        pending.removeAll()
        return [.paste(pastedText())]
    }

    /// Gives up waiting for the rest of a sequence: a pending Esc becomes ``Key/Name/escape`` (and
    /// what follows it is decoded on its own), half a UTF-8 character is dropped. An unfinished
    /// bracketed paste keeps waiting for its end.
    ///
    /// A control string or a long sequence whose end never came is dropped, never read as keys;
    /// so is an unfinished CSI sequence (`ESC [ <`). Esc then a string's first byte (`ESC ]`,
    /// `ESC P`) with nothing after was Alt and that key; `ESC [` alone, Esc and `[`.
    public mutating func flush() -> [Key] {
        guard paste == nil else { return [] }
        if skipping != nil {
            skipping = nil
            pending.removeAll()
            return []
        }
        guard let first = pending.first else { return [] }
        guard first == KeyDecoder.escape else {
            // Half a UTF-8 character that nothing completed.
            defer { pending.removeAll() }
            guard invalidBytes == .kept else { return [] }
            return [.text(UndecodedByte.text(pending))]
        }
        if pending.count == 2, pending[1] != UInt8(ascii: "["), KeyDecoder.sequenceStarts.contains(pending[1]) {
            let introducer = pending[1]
            pending.removeAll()
            return [.alt(Character(UnicodeScalar(introducer)))]
        }
        if pending.count > 2, KeyDecoder.sequenceStarts.contains(pending[1]) {
            pending.removeAll()
            return []
        }
        let rest = pending.dropFirst()
        pending.removeAll()
        var keys: [Key] = [.key(.escape)]
        keys += decode(rest)
        keys += flush()
        return keys
    }

    // MARK: - Pieces

    /// The key for a C0 control byte or DEL.
    static func controlKey(_ byte: UInt8) -> Key {
        switch byte {
        case 0x0D, 0x0A: return .key(.enter)
        case 0x09: return .key(.tab)
        case 0x08, 0x7F: return .key(.backspace)
        case KeyDecoder.escape: return .key(.escape)
        case 0x00: return .control("@")
        case 0x01...0x1A: return .control(Character(UnicodeScalar(byte + 0x60)))
        default: return .control(Character(UnicodeScalar(byte + 0x40)))  // \ ] ^ _
        }
    }

    enum UTF8Result {
        case character(Unicode.Scalar, length: Int)
        case incomplete
        case invalid
    }

    /// The UTF-8 character starting at `index`.
    func decodeUTF8(at index: Int) -> UTF8Result {
        Self.utf8(in: pending, at: index)
    }

    /// The UTF-8 character starting at `index` of `pending` (ASCII is no concern of this).
    static func utf8(in pending: [UInt8], at index: Int) -> UTF8Result {
        let lead = pending[index]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return .invalid
        }
        let available = pending[index...].prefix(length)
        guard available.dropFirst().allSatisfy({ $0 & 0xC0 == 0x80 }) else { return .invalid }
        guard available.count == length else { return .incomplete }
        let decoded = String(decoding: available, as: UTF8.self)
        guard decoded.utf8.elementsEqual(available), let scalar = decoded.unicodeScalars.first else {
            return .invalid  // an overlong form or a surrogate
        }
        return .character(scalar, length: length)
    }

    enum PasteProgress {
        /// The end marker was found; decoding resumes at this index.
        case finished(Int)
        /// The end has not arrived; the bytes before this index are in the paste, the rest could
        /// start the end marker.
        case waiting(Int)
    }

    /// Moves paste bytes from `pending` (from `index`) into `paste`, up to the end marker.
    private mutating func collectPaste(from index: Int) -> PasteProgress {
        let marker = KeyDecoder.pasteEnd
        var position = index
        while position + marker.count <= pending.count {
            if pending[position] == KeyDecoder.escape && pending[position..<position + marker.count].elementsEqual(marker) {
                paste?.append(contentsOf: pending[index..<position])
                return .finished(position + marker.count)
            }
            position += 1
        }
        // Keep the longest tail that could begin the marker.
        var keep = min(marker.count - 1, pending.count - index)
        while keep > 0 && !pending.suffix(keep).elementsEqual(marker.prefix(keep)) { keep -= 1 }
        paste?.append(contentsOf: pending[index..<pending.count - keep])
        return .waiting(pending.count - keep)
    }

    /// The finished paste as text (carriage returns made newlines), leaving paste mode.
    private mutating func pastedText() -> String {
        let bytes = paste ?? []
        let text = LineBuffer.normalized(invalidBytes == .kept ? UndecodedByte.text(bytes) : String(decoding: bytes, as: UTF8.self))
        paste = nil
        return text
    }
}
