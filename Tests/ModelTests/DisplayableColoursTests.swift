import Model
import Testing

/// `displayableKeepingColours`: what an app held while it had the whole terminal, as it is
/// written out to a terminal afterwards.
@Suite struct DisplayableColoursTests {
    @Test func controlSequencesAreEscapedAndColoursKept() {
        #expect(displayableKeepingColours("evil \u{1B}[?1049h|\u{1B}]0;pwn\u{7}|\u{1B}[31mred\u{1B}[0m|end\n")
                == #"evil \u{1B}[?1049h|\u{1B}]0;pwn\u{7}|"# + "\u{1B}[31mred\u{1B}[0m|end\n")
        #expect(displayableKeepingColours("plain\ttext\n") == "plain\ttext\n")
    }

    /// A colour left set is reset at the end; a sequence that is not a plain colour (a cursor
    /// move, one with too long parameters) is escaped.
    @Test func aColourLeftSetIsResetAndOtherSequencesEscaped() {
        #expect(displayableKeepingColours("\u{1B}[1;32mok") == "\u{1B}[1;32mok\u{1B}[0m")
        #expect(displayableKeepingColours("\u{1B}[2Aup") == #"\u{1B}[2Aup"#)
        let long = "\u{1B}[" + String(repeating: "1;", count: 20) + "m"
        #expect(displayableKeepingColours(long).hasPrefix(#"\u{1B}["#))
    }
}
