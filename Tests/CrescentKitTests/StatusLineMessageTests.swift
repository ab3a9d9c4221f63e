@testable import CrescentKit
import Testing

/// Issue 39 P2: the live status line cut a long message before its fix (`did you mean 'add'?`).
@Suite struct StatusLineMessageTests {
    static let message = "crescent: unknown command 'ad'; commands of Groceries: add, remove, help, quit; did you mean 'add'?"

    /// A message that fits beside the hints is shown there; one that does not keeps the hints
    /// first and ends in `(?)`.
    @Test func aMessageThatDoesNotFitSaysTheHelpShowsItAll() {
        var status = StatusLine(hints: "a add  d delete  ? help  q quit")
        status.show("crescent: saved")
        #expect(status.text(width: 100) == "a add  d delete  ? help  q quit  │ crescent: saved")
        status.show(Self.message)
        let line = status.text(width: 100)
        #expect(line.hasPrefix("a add  d delete  ? help  q quit  │ crescent: unknown command 'ad'"), "\(line)")
        #expect(line.hasSuffix("… (?)") && DisplayWidth.of(line) <= 100, "\(line)")
    }

    /// Wider than the line: it says `?` shows it whole, and the help does, wrapped between words.
    @Test func aMessageWiderThanTheLineIsShownWholeUnderTheHelp() {
        var status = StatusLine(hints: "q quit")
        status.show(Self.message)
        let line = status.text(width: 60)
        #expect(line.hasSuffix("… (?)") && DisplayWidth.of(line) <= 60, "\(line)")
        let frame = ScreenFrame(root: nil, overlay: ["q  quit"], status: status, width: 60, height: 10)
        let text = frame.rows.joined(separator: "\n")
        #expect(text.contains("Last message:\ncrescent: unknown command 'ad'; commands of Groceries: add,\nremove, help, quit; did you mean 'add'?"), "\(text)")
    }

    /// Issue 34: hints wider than the line left no room for the message. They are shortened at
    /// a whole hint to `… ?`, leaving the message its room; with no message they end the same way.
    @Test func hintsWiderThanTheLineAreShortenedForTheMessage() {
        let hints = (1...12).map { "\($0 % 10) does \($0)" }.joined(separator: "  ")
        var status = StatusLine(hints: hints)
        let alone = status.text(width: 80)
        #expect(alone.hasPrefix("1 does 1  2 does 2") && alone.hasSuffix("  … ?") && DisplayWidth.of(alone) <= 80, "\(alone)")
        status.show("crescent: saved 3 items")
        let line = status.text(width: 80)
        #expect(line.hasPrefix("1 does 1") && line.hasSuffix("… ?  │ crescent: saved 3 items") && DisplayWidth.of(line) <= 80, "\(line)")
        #expect(status.wholeMessage(width: 80).isEmpty, "the message was shown whole")
        status.show(Self.message)
        let long = status.text(width: 80)
        #expect(long.hasPrefix("1 does 1") && long.contains("… ?  │ crescent: unknown command 'ad'") && long.hasSuffix("… (?)"), "\(long)")
        #expect(DisplayWidth.of(long) <= 80, "\(long)")
        #expect(!status.wholeMessage(width: 80).isEmpty, "the ? help shows the cut message")
    }

    /// Attack new25k D15: a carriage return ended the message (`A…C\rD\tE` showed `A0;pwnBC`) and
    /// an OSC string's payload showed (`0;pwn`). What follows the return is shown, as a terminal
    /// shows it, and the whole OSC string is dropped.
    @Test func aCarriageReturnDoesNotEndTheMessage() {
        var status = StatusLine(hints: "q quit")
        status.show("A\u{1B}[2J\u{1B}]0;pwn\u{07}B\u{1B}[?1049lC\rD\tE")
        #expect(status.message == "D\tE", "\(status.message.debugDescription)")
        status.show("progress 10%\rprogress 90%\r   \nnext line")
        #expect(status.message == "progress 90%", "\(status.message.debugDescription)")
        status.show("title \u{1B}]2;name\u{1B}\\done")
        #expect(status.message == "title done", "\(status.message.debugDescription)")
    }

    /// Attack new25k D13: a deep stack's title line kept the root and cut the controller on top
    /// (`K1 › K2 › … › K15 …`). The first titles give way.
    @Test func aDeepTitleLineKeepsTheTopController() {
        let title = (1...15).map { "K\($0)" }.joined(separator: " › ")
        let frame = ScreenFrame(root: nil, title: title, overlay: nil, status: StatusLine(), width: 30, height: 5)
        #expect(frame.rows[0].hasSuffix("K14 › K15"), "\(frame.rows[0])")
        #expect(frame.rows[0].hasPrefix("… › "), "\(frame.rows[0])")
        let short = ScreenFrame(root: nil, title: "A › B", overlay: nil, status: StatusLine(), width: 30, height: 5)
        #expect(short.rows[0] == "A › B")
    }

    /// Attack new25k D6: with the command line open, what runs (Tab's `complete` that loops) was
    /// never shown: the line showed the prompt alone. It shows beside the prompt, in place of
    /// the message, and the prompt keeps its cursor.
    @Test func whatRunsShowsBesideTheOpenCommandLine() {
        var status = StatusLine(hints: "q quit")
        status.show("an older message")
        status.prompt = (":spin ", 6)
        status.busy = "Tab completion of 'spin' running 1.2 s · ctrl-c stops it, keys wait"
        #expect(status.text(width: 100) == ":spin    │ Tab completion of 'spin' running 1.2 s · ctrl-c stops it, keys wait")
        #expect(status.shownPrompt(width: 100)?.cursor == 6)
        status.busy = ""
        #expect(status.text(width: 100) == ":spin    │ an older message")
    }

    /// A hint with a long help that does not fit whole is cut with an ellipsis to the room left
    /// (its help was replaced by the method's name); short hints still go whole behind `… ?`.
    @Test func aLongHintIsCutToTheRoomLeft() {
        let hints = "x delete the selected grocery item  y append a line to the end of the list and select it  ? help  q quit"
        let line = StatusLine(hints: hints).text(width: 60)
        #expect(line == "x delete the selected grocery item  y append a line to th… ?", "\(line)")
        #expect(DisplayWidth.of(line) == 60)
        let narrow = StatusLine(hints: hints).text(width: 40)
        #expect(narrow == "x delete the selected grocery item  … ?", "too little room for y's help: \(narrow)")
        let first = StatusLine(hints: "y append a line to the end of the list and select it").text(width: 30)
        #expect(first == "y append a line to the end … ?", "\(first)")
    }
}
