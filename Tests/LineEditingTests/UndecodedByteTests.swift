import LineEditing
import Testing

/// Bytes a terminal sends that are not UTF-8 are kept as stand-ins when the decoder is asked to
/// (the controller app's command line): typed, cut off at the end of a read, or pasted. They
/// were dropped, and the words after them shifted.
@Suite struct UndecodedByteTests {
    private func standIns(_ bytes: UInt8...) -> String {
        String(String.UnicodeScalarView(bytes.map(UndecodedByte.scalar(for:))))
    }

    @Test func keptBytesStayWhereTheyWereTyped() {
        var decoder = KeyDecoder(invalidBytes: .kept)
        let keys = decoder.decode(Array("add ".utf8) + [0xFF, 0xFE] + Array(" 7".utf8))
        #expect(keys == [.text("add " + standIns(0xFF, 0xFE) + " 7")])
        #expect(UndecodedByte.escaped("add " + standIns(0xFF, 0xFE) + " 7") == #"add \xFF\xFE 7"#)
        var dropping = KeyDecoder()
        #expect(dropping.decode(Array("add ".utf8) + [0xFF, 0xFE] + Array(" 7".utf8)) == [.text("add  7")], "the default drops them")
    }

    @Test func aLeadByteWithoutItsContinuationIsKept() {
        var decoder = KeyDecoder(invalidBytes: .kept)
        // Followed by a space: not UTF-8 at once.
        #expect(decoder.decode(Array("caf".utf8) + [0xC3] + Array(" x".utf8)) == [.text("caf" + standIns(0xC3) + " x")])
        // At the end of a read: it waits for its continuation, and nothing came.
        #expect(decoder.decode(Array("caf".utf8) + [0xC3]) == [.text("caf")])
        #expect(decoder.isAwaitingMoreBytes)
        #expect(decoder.flush() == [.text(standIns(0xC3))])
        #expect(decoder.decode(Array("é".utf8)) == [.text("é")], "text after it decodes as before")
    }

    @Test func aPasteKeepsThemToo() {
        var decoder = KeyDecoder(invalidBytes: .kept)
        let keys = decoder.decode(Array("\u{1B}[200~a".utf8) + [0xFF] + Array("b\u{1B}[201~".utf8))
        #expect(keys == [.paste("a" + standIns(0xFF) + "b")])
    }

    @Test func textIsNoStandIn() {
        #expect(UndecodedByte.byte(of: "a") == nil)
        #expect(UndecodedByte.byte(of: "\u{FFFD}") == nil)
        #expect(UndecodedByte.byte(of: UndecodedByte.scalar(for: 0x80)) == 0x80)
        #expect(!UndecodedByte.isIn("café 世界"))
        #expect(UndecodedByte.escaped("café") == "café")
    }
}
