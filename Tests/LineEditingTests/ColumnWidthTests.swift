import LineEditing
import Testing

@Suite struct ColumnWidthTests {
    @Test(arguments: [
        ("a", 1), ("語", 2), ("한", 2), ("ｱ", 1), ("Ａ", 2), ("😀", 2),
        ("👩‍👩‍👧", 2), ("🇫🇷", 2), ("1️⃣", 2), ("☺", 1), ("☺️", 2),
        ("e\u{301}", 1), ("\u{301}", 0), ("\u{200B}", 0), ("\t", 4), ("\u{1}", 2), ("\n", 0),
    ] as [(String, Int)])
    func widthOfOneCharacter(_ text: String, _ columns: Int) throws {
        let character = try #require(text.count == 1 ? text.first : nil)
        #expect(ColumnWidth.of(character) == columns)
    }

    @Test func widthOfText() {
        #expect(ColumnWidth.of("héllo 世界") == 10)
        #expect(ColumnWidth.of("👨‍👩‍👧‍👦 ok") == 5)
        #expect(ColumnWidth.of("") == 0)
    }

    @Test func controlCharactersHaveVisibleGlyphs() {
        #expect(ColumnWidth.glyph(for: "\t") == "    ")
        #expect(ColumnWidth.glyph(for: "\u{1}") == "^A")
        #expect(ColumnWidth.glyph(for: "\u{1B}") == "^[")
        #expect(ColumnWidth.glyph(for: "\u{7F}") == "^?")
        #expect(ColumnWidth.glyph(for: "\u{85}") == "\u{FFFD}")
        #expect(ColumnWidth.glyph(for: "語") == "語")
        #expect(ColumnWidth.glyph(for: "\n") == "")
    }
}
