@testable import CrescentKit
import Testing

/// How many terminal columns text takes (issue 4: "Unicode width (CJK, emoji) is measured correctly
/// in tables and truncation"), and truncating, padding and fitting by display width.
@Suite struct DisplayWidthTests {
    // MARK: Measuring

    @Test func asciiTakesOneColumnPerCharacter() {
        #expect(DisplayWidth.of("") == 0)
        #expect(DisplayWidth.of("a") == 1)
        #expect(DisplayWidth.of("hello, world!") == 13)
        #expect(DisplayWidth.of(" ~") == 2)
    }

    /// A control character is shown as its escape (attack new28t D6: dropping only the ESC of a
    /// sequence showed its parameters as text), and takes that escape's columns, so a row holding
    /// one keeps its width; a C1 control and a bidirectional mark too.
    @Test func controlCharactersTakeTheColumnsOfTheirEscapes() {
        #expect(DisplayWidth.of("\u{7}") == 5 && DisplayWidth.visible("\u{7}") == #"\u{7}"#)
        #expect(DisplayWidth.of("\u{1B}") == 6 && DisplayWidth.visible("\u{1B}") == #"\u{1B}"#)
        #expect(DisplayWidth.of("\u{7F}") == 6)
        #expect(DisplayWidth.of("a\u{0}b") == 7 && DisplayWidth.visible("a\u{0}b") == #"a\u{0}b"#)
        #expect(DisplayWidth.of("\r\n") == 10 && DisplayWidth.visible("\r\n") == #"\u{D}\u{A}"#)
        #expect(DisplayWidth.visible("x\u{9B}y\u{202E}z") == #"x\u{9B}y\u{202E}z"#)
        for text in ["T\u{1B}]0;TITLE\u{7}\u{1B}[2Jx", "x\u{9B}y", "a\u{202E}b", "a\u{200F}b", "tab\there"] {
            #expect(DisplayWidth.of(text) == DisplayWidth.of(DisplayWidth.visible(text)), "\(text)")
            // Cut by the columns it takes: the cut text's width is the width asked for.
            #expect(DisplayWidth.of(DisplayWidth.truncate(text, to: 9)) <= 9, "\(text)")
        }
        #expect(DisplayWidth.truncate("a\u{1B}b", to: 3) == "a…", "an escape is cut whole")
    }

    @Test(arguments: [
        ("日本語", 6), ("中文", 4), ("한국어", 6), ("ひらがな", 8), ("カタカナ", 8),
        ("Ａ", 2), ("、", 2), ("。", 2), ("𠀋", 2),      // fullwidth Latin, CJK punctuation, plane 2
        ("a日b", 4),
    ])
    func eastAsianWideCharactersTakeTwoColumns(text: String, width: Int) {
        #expect(DisplayWidth.of(text) == width, "\(text)")
    }

    @Test func halfwidthFormsTakeOneColumn() {
        #expect(DisplayWidth.of("ｱｲｳ") == 3)
        #expect(DisplayWidth.of("é") == 1)
        #expect(DisplayWidth.of("Ωμέγα") == 5)
        #expect(DisplayWidth.of("Привет") == 6)
    }

    @Test(arguments: [
        ("😀", 2),                                   // emoji presentation
        ("🚀", 2),
        ("⌚", 2),                                   // BMP emoji with default emoji presentation
        ("👍🏽", 2),                                  // skin tone modifier
        ("👋🏿", 2),
        ("👨‍👩‍👧‍👦", 2),                               // ZWJ family
        ("👩🏽‍💻", 2),                                 // ZWJ with a skin tone
        ("🏳️‍🌈", 2),                                  // flag ZWJ sequence with FE0F
        ("🇯🇵", 2),                                  // regional indicator pair
        ("❤️", 2),                                   // text-default symbol + VS16
        ("1️⃣", 2),                                   // keycap sequence
        ("ok👍🏽ok", 6),
    ])
    func emojiTakeTwoColumnsPerCluster(text: String, width: Int) {
        #expect(DisplayWidth.of(text) == width, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test func combiningMarksAndZeroWidthCharactersTakeNoColumns() {
        #expect(DisplayWidth.of("e\u{301}") == 1, "e + combining acute")
        #expect(DisplayWidth.of("a\u{308}\u{323}") == 1, "two combining marks")
        #expect(DisplayWidth.of("\u{301}") == 0, "a lone combining mark")
        #expect(DisplayWidth.of("\u{20DD}") == 0, "an enclosing mark")
        #expect(DisplayWidth.of("a\u{200B}b") == 2, "zero-width space")
        #expect(DisplayWidth.of("a\u{200D}b") == 2, "a lone zero-width joiner")
        #expect(DisplayWidth.of("\u{FEFF}") == 0, "BOM / zero-width no-break space")
        #expect(DisplayWidth.of("日\u{301}") == 2, "a combining mark on a wide character")
        #expect(DisplayWidth.of("ก\u{E34}") == 1, "Thai vowel sign")
    }

    @Test func textPresentationSymbolsTakeOneColumn() {
        #expect(DisplayWidth.of("❤") == 1, "U+2764 without VS16")
        #expect(DisplayWidth.of("☺") == 1)
        #expect(DisplayWidth.of("→") == 1)
        #expect(DisplayWidth.of("─") == 1)
        #expect(DisplayWidth.of("…") == 1)
    }

    // MARK: Truncating

    @Test func truncateLeavesTextThatFits() {
        #expect(DisplayWidth.truncate("hello", to: 5) == "hello")
        #expect(DisplayWidth.truncate("hello", to: 80) == "hello")
        #expect(DisplayWidth.truncate("日本語", to: 6) == "日本語")
        #expect(DisplayWidth.truncate("👍🏽ok", to: 4) == "👍🏽ok")
        #expect(DisplayWidth.truncate("", to: 3) == "")
    }

    @Test func truncateEndsInAnEllipsisWithinTheWidth() {
        #expect(DisplayWidth.truncate("hello world", to: 8) == "hello w…")
        #expect(DisplayWidth.truncate("hello", to: 4) == "hel…")
        #expect(DisplayWidth.truncate("hello", to: 1) == "…")
        #expect(DisplayWidth.truncate("hello", to: 0) == "")
        #expect(DisplayWidth.truncate("hello", to: -3) == "")
    }

    /// Text of no more bytes than the width is left as it is without being measured (nothing
    /// takes more columns than bytes), except a tab, which takes four columns in one byte.
    @Test func truncateMeasuresTabsAndFitsEverythingWithinTheWidth() {
        #expect(DisplayWidth.truncate("a\tb", to: 3) == "a…")
        #expect(DisplayWidth.truncate("a\tb", to: 6) == "a\tb")
        let samples = ["a\tb\tc", "日本語", "e\u{301}e\u{301}", "👨‍👩‍👧‍👦x", "\u{1}\u{2}ab", "──  ─", "x\u{200B}y", "☺\u{FE0F}z"]
        for text in samples {
            for width in 1...12 {
                let cut = DisplayWidth.truncate(text, to: width)
                #expect(DisplayWidth.of(cut) <= width, "\(text.debugDescription) in \(width): \(cut.debugDescription)")
                #expect(cut == text || DisplayWidth.of(text) > width, "\(text.debugDescription) fits in \(width) but was cut")
            }
        }
    }

    @Test func truncateNeverSplitsAWideCharacterOrACluster() {
        // 日本語 is 6 columns: in 5, "日本" (4) and the ellipsis fit; in 4 only "日" does.
        #expect(DisplayWidth.truncate("日本語", to: 5) == "日本…")
        #expect(DisplayWidth.truncate("日本語", to: 4) == "日…")
        #expect(DisplayWidth.truncate("日本語", to: 2) == "…")
        #expect(DisplayWidth.truncate("a👨‍👩‍👧‍👦b", to: 3) == "a…")
        #expect(DisplayWidth.truncate("a👨‍👩‍👧‍👦bc", to: 4) == "a👨‍👩‍👧‍👦…")
        #expect(DisplayWidth.truncate("e\u{301}e\u{301}e\u{301}", to: 2) == "e\u{301}…")
        for width in 0...12 {
            for text in ["日本語テキスト", "ab👍🏽cd👨‍👩‍👧‍👦ef", "e\u{301}xyz日"] {
                let cut = DisplayWidth.truncate(text, to: width)
                #expect(DisplayWidth.of(cut) <= max(width, 0), "\(text) in \(width): \(cut)")
            }
        }
    }

    @Test func truncateMeasuresTabsLikeOf() {
        // `of` counts a tab as 4 columns, so text with a tab that is longer than the width must be cut.
        do {
            #expect(DisplayWidth.of(DisplayWidth.truncate("a\tb", to: 3)) <= 3)
        }
    }

    // MARK: Padding and fitting

    @Test func padAddsSpacesByDisplayWidth() {
        #expect(DisplayWidth.pad("ab", to: 5) == "ab   ")
        #expect(DisplayWidth.pad("ab", to: 5, alignRight: true) == "   ab")
        #expect(DisplayWidth.pad("日本", to: 5) == "日本 ")
        #expect(DisplayWidth.pad("👍🏽", to: 4, alignRight: true) == "  👍🏽")
        #expect(DisplayWidth.pad("e\u{301}", to: 3) == "e\u{301}  ")
        #expect(DisplayWidth.pad("toolong", to: 3) == "toolong", "pad never cuts")
    }

    @Test func fitGivesExactlyTheWidth() {
        #expect(DisplayWidth.fit("abc", to: 5) == "abc  ")
        #expect(DisplayWidth.fit("abc", to: 5, alignRight: true) == "  abc")
        #expect(DisplayWidth.fit("abcdef", to: 4) == "abc…")
        #expect(DisplayWidth.fit("abcdef", to: 4, alignRight: true) == "abc…")
        #expect(DisplayWidth.fit("日本語", to: 4) == "日… ", "a wide character that does not fit leaves a space")
        #expect(DisplayWidth.fit("日本語", to: 4, alignRight: true) == " 日…")
        for width in 1...10 {
            for text in ["日本語テキスト", "ab👍🏽cd", "x", "", "e\u{301}e\u{301}"] {
                #expect(DisplayWidth.of(DisplayWidth.fit(text, to: width)) == width, "\(text) in \(width)")
                #expect(DisplayWidth.of(DisplayWidth.fit(text, to: width, alignRight: true)) == width, "\(text) in \(width)")
            }
        }
    }

    /// Padding fills to the width by columns (a wide character takes two), on either side, also
    /// past the run of spaces it copies from; text as wide or wider is left as it is.
    @Test func padFillsToTheWidthExactly() {
        #expect(DisplayWidth.pad("ab", to: 5) == "ab   ")
        #expect(DisplayWidth.pad("ab", to: 5, alignRight: true) == "   ab")
        #expect(DisplayWidth.pad("語", to: 5) == "語   ")
        #expect(DisplayWidth.pad("x", to: 1000) == "x" + String(repeating: " ", count: 999))
        #expect(DisplayWidth.pad("abc", to: 2) == "abc")
        #expect(DisplayWidth.of("ab\u{7}c") == 8 && DisplayWidth.of("row 1") == 5 && DisplayWidth.of("é語") == 3)
    }
}
