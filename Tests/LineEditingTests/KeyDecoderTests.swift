import LineEditing
import Testing

@Suite struct KeyDecoderTests {
    private func decode(_ text: String) -> [Key] {
        var decoder = KeyDecoder()
        return decoder.decode(Array(text.utf8))
    }

    @Test func printableTextComesInOneEvent() {
        #expect(decode("hello, 世界 😀") == [.text("hello, 世界 😀")])
        #expect(decode("") == [])
    }

    @Test func utf8SplitAcrossReadsWaitsForTheRest() {
        var decoder = KeyDecoder()
        let bytes = Array("a世👩‍👩‍👧".utf8)  // 1 + 3 + 18 bytes
        var keys: [Key] = []
        for byte in bytes {
            keys += decoder.decode([byte])
            #expect(!decoder.isAwaitingMoreBytes || byte >= 0x80)
        }
        #expect(keys.map { if case .text(let text) = $0 { text } else { "?" } }.joined() == "a世👩‍👩‍👧")
        #expect(keys.count == 7, "one event per complete scalar")
        var split = KeyDecoder()
        #expect(split.decode([0x61, 0xE4, 0xB8]) == [.text("a")])
        #expect(split.isAwaitingMoreBytes)
        #expect(split.decode([0x96, 0x62]) == [.text("世b")])
    }

    @Test func invalidBytesAreDropped() {
        var decoder = KeyDecoder()
        #expect(decoder.decode([0x61, 0xFF, 0x80, 0xC0, 0xAF, 0x62]) == [.text("ab")])
        #expect(decoder.decode([0xE4, 0x41]) == [.text("A")], "a lead byte without its continuation")
        #expect(decoder.decode([0xED, 0xA0, 0x80]) == [], "a surrogate")
        #expect(decoder.decode([0xC2, 0x85]) == [], "a C1 control is not text")
    }

    @Test func controlKeys() {
        #expect(decode("\u{1}\u{5}\u{b}\u{15}\u{17}\u{19}\u{14}\u{3}\u{4}\u{c}\u{12}\u{7}") == [
            .control("a"), .control("e"), .control("k"), .control("u"), .control("w"), .control("y"),
            .control("t"), .control("c"), .control("d"), .control("l"), .control("r"), .control("g"),
        ])
        #expect(decode("\r\n\t\u{7F}\u{8}\u{0}\u{1F}") == [
            .key(.enter), .key(.tab), .key(.backspace), .key(.backspace), .control("@"), .control("_"),
        ])
        #expect(decode("a\rb") == [.text("a"), .key(.enter), .text("b")])
        #expect(decode("\n\n") == [.key(.enter), .key(.enter)])
    }

    @Test(arguments: [
        ("\u{1B}[A", Key.key(.up)), ("\u{1B}[B", .key(.down)), ("\u{1B}[C", .key(.right)), ("\u{1B}[D", .key(.left)),
        ("\u{1B}OA", .key(.up)), ("\u{1B}OD", .key(.left)), ("\u{1B}OH", .key(.home)), ("\u{1B}OF", .key(.end)),
        ("\u{1B}[H", .key(.home)), ("\u{1B}[F", .key(.end)), ("\u{1B}[1~", .key(.home)), ("\u{1B}[4~", .key(.end)),
        ("\u{1B}[7~", .key(.home)), ("\u{1B}[8~", .key(.end)), ("\u{1B}[2~", .key(.insert)),
        ("\u{1B}[3~", .key(.delete)), ("\u{1B}[5~", .key(.pageUp)), ("\u{1B}[6~", .key(.pageDown)),
        ("\u{1B}[1;5C", .key(.right, modifiers: .control)), ("\u{1B}[1;5D", .key(.left, modifiers: .control)),
        ("\u{1B}[1;3D", .key(.left, modifiers: .alt)), ("\u{1B}[1;2A", .key(.up, modifiers: .shift)),
        ("\u{1B}[1;5H", .key(.home, modifiers: .control)), ("\u{1B}[3;5~", .key(.delete, modifiers: .control)),
        ("\u{1B}[Z", .key(.backTab)), ("\u{1B}Od", .key(.left, modifiers: .control)),
        ("\u{1B}[3^", .key(.delete, modifiers: .control)), ("\u{1B}\u{1B}[C", .key(.right, modifiers: .alt)),
        ("\u{1B}b", .alt("b")), ("\u{1B}F", .alt("F")), ("\u{1B}.", .alt(".")), ("\u{1B}é", .alt("é")),
        ("\u{1B}\u{7F}", .key(.backspace, modifiers: .alt)), ("\u{1B}\r", .key(.enter, modifiers: .alt)),
    ] as [(String, Key)])
    func escapeSequences(_ sequence: String, _ key: Key) {
        #expect(decode(sequence) == [key])
        #expect(decode("x" + sequence + "y") == [.text("x"), key, .text("y")])
    }

    @Test func unknownSequencesAreDropped() {
        #expect(decode("\u{1B}[99~a\u{1B}OZb\u{1B}[200;1R") == [.text("a"), .text("b")].coalesced)
        #expect(decode("\u{1B}[<35;3;4M") == [], "a mouse motion")
    }

    @Test func functionKeys() {
        #expect(decode("\u{1B}OP\u{1B}OQ\u{1B}OR\u{1B}OS") == (1...4).map { .key(.function($0)) })
        #expect(decode("\u{1B}[15~\u{1B}[17~\u{1B}[21~\u{1B}[23~\u{1B}[24~") == [5, 6, 10, 11, 12].map { .key(.function($0)) })
        #expect(decode("\u{1B}[1;5P\u{1B}[15;2~") == [.key(.function(1), modifiers: .control), .key(.function(5), modifiers: .shift)])
    }

    @Test func sgrMouseReports() {
        #expect(decode("\u{1B}[<0;3;4M\u{1B}[<0;3;4m") == [.mouse(MouseEvent(action: .press(button: 0), column: 3, row: 4)),
                                                          .mouse(MouseEvent(action: .release(button: 0), column: 3, row: 4))])
        #expect(decode("\u{1B}[<64;1;2M\u{1B}[<65;1;2M") == [.mouse(MouseEvent(action: .wheelUp, column: 1, row: 2)),
                                                           .mouse(MouseEvent(action: .wheelDown, column: 1, row: 2))])
        #expect(decode("\u{1B}[<2;10;1M") == [.mouse(MouseEvent(action: .press(button: 2), column: 10, row: 1))])
    }

    @Test func sequencesSplitAcrossReads() {
        var decoder = KeyDecoder()
        #expect(decoder.decode([0x1B]) == [])
        #expect(decoder.isAwaitingMoreBytes)
        #expect(decoder.decode(Array("[1;".utf8)) == [])
        #expect(decoder.decode(Array("5Cz".utf8)) == [.key(.right, modifiers: .control), .text("z")])
        #expect(!decoder.isAwaitingMoreBytes)
    }

    @Test func aLoneEscapeNeedsAFlush() {
        var decoder = KeyDecoder()
        #expect(decoder.decode([0x1B]) == [])
        #expect(decoder.flush() == [.key(.escape)])
        #expect(!decoder.isAwaitingMoreBytes)
        #expect(decoder.decode(Array("\u{1B}[".utf8)) == [])
        #expect(decoder.flush() == [.key(.escape), .text("[")])
        #expect(decoder.decode([0xE4, 0xB8]) == [])
        #expect(decoder.flush() == [], "half a character is dropped")
        #expect(decoder.decode(Array("ok".utf8)) == [.text("ok")])
    }

    @Test func bracketedPasteIsOneEvent() {
        #expect(decode("a\u{1B}[200~line 1\r\nline 2\rtab\there \u{3}\u{1B}[A\u{1B}[201~b") == [
            .text("a"), .paste("line 1\nline 2\ntab\there \u{3}\u{1B}[A"), .text("b"),
        ])
        #expect(decode("\u{1B}[200~\u{1B}[201~") == [.paste("")])
    }

    @Test func bracketedPasteSplitAcrossReads() {
        let whole = Array("\u{1B}[200~print('語')\r\u{1B}[201~!".utf8)
        for split in 1..<whole.count {
            var decoder = KeyDecoder()
            let keys = decoder.decode(whole[..<split]) + decoder.decode(whole[split...])
            #expect(keys == [.paste("print('語')\n"), .text("!")], "split at \(split)")
        }
        var decoder = KeyDecoder()
        #expect(decoder.decode(Array("\u{1B}[200~abc".utf8)) == [])
        #expect(!decoder.isAwaitingMoreBytes, "a paste is not an Esc waiting for a timeout")
        #expect(decoder.flush() == [], "a paste waits for its end")
        #expect(decoder.decode(Array("\u{1B}[20".utf8)) == [])
        #expect(decoder.decode(Array("0~x\u{1B}[201~".utf8)) == [.paste("abc\u{1B}[200~x")])
    }

    /// A terminal's answers to queries (OSC, DCS, APC…) are strings whose letters were read as
    /// keys: `ESC P q e ESC \` quitted an app, `ESC P 1$rdd ESC \` deleted an item (attack
    /// new25k D2). They are dropped whole, up to BEL or ST, in one read or split across reads.
    @Test func controlStringsAreNeverKeys() {
        #expect(decode("\u{1B}]0;title\u{07}x") == [.text("x")])
        #expect(decode("\u{1B}Pqe\u{1B}\\y") == [.text("y")])
        #expect(decode("\u{1B}]11;rgb:0000/0000/0000\u{1B}\\") == [])
        #expect(decode("a\u{1B}P1$rdd\u{1B}\\b\u{1B}_apc\u{07}\u{1B}^pm\u{07}\u{1B}Xsos\u{07}c") == [.text("abc")])
        var split = KeyDecoder()
        var keys: [Key] = []
        for byte in Array("\u{1B}P>|tmux 3.3a\u{1B}\\z".utf8) { keys += split.decode([byte]) }
        #expect(keys == [.text("z")])
        // Another Esc cancels the string and is read: a lost end costs the string, not the key after it.
        #expect(decode("\u{1B}]0;lost\u{1B}[A") == [.key(.up)])
        // A string that never ends is dropped when no byte comes (the reader's flush), and holds
        // no memory meanwhile: 1 MB of it leaves nothing pending.
        var endless = KeyDecoder()
        #expect(endless.decode(Array("\u{1B}]52;c;".utf8) + [UInt8](repeating: 0x41, count: 1 << 20)) == [])
        #expect(endless.isAwaitingMoreBytes)
        #expect(endless.flush() == [])
        #expect(endless.decode(Array("k".utf8)) == [.text("k")])
    }

    /// Esc then `]` or `P` typed by a person, with nothing after, is still Alt and that key (and
    /// `ESC [` Esc then `[`, as ``aLoneEscapeNeedsAFlush`` shows); an unfinished CSI sequence is
    /// dropped, never its bytes as keys (`ESC [ <` was the key `<`).
    @Test func escapesThatBeginSequencesAloneAreAltKeysAndUnfinishedOnesAreDropped() {
        for introducer in ["]", "P"] {
            var decoder = KeyDecoder()
            #expect(decoder.decode(Array("\u{1B}\(introducer)".utf8)) == [])
            #expect(decoder.flush() == [.alt(Character(introducer))])
        }
        var truncated = KeyDecoder()
        #expect(truncated.decode(Array("\u{1B}[<".utf8)) == [])
        #expect(truncated.flush() == [])
    }

    /// A CSI sequence past any key's length is dropped up to its final byte: 5,000 parameters
    /// then `A` were the key `A`.
    @Test func aVeryLongSequenceIsDroppedToItsEnd() {
        let long = "\u{1B}[" + String(repeating: "1;", count: 5000) + "A"
        #expect(decode(long + "x") == [.text("x")])
        var split = KeyDecoder()
        #expect(split.decode(Array((long.dropLast()).utf8)) == [])
        #expect(split.decode(Array("Ay".utf8)) == [.text("y")])
    }
}

private extension Array where Element == Key {
    /// Adjacent text events merged, as the decoder emits them from one read.
    var coalesced: [Key] {
        var result: [Key] = []
        for key in self {
            if case .text(let next) = key, case .text(let previous)? = result.last {
                result[result.count - 1] = .text(previous + next)
            } else {
                result.append(key)
            }
        }
        return result
    }
}
