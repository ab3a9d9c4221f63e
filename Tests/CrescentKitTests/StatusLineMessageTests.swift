@testable import CrescentKit
import Testing

/// Issue 39 P2: the live status line cut a long message before its fix (`did you mean 'add'?`).
@Suite struct StatusLineMessageTests {
    static let message = "crescent: unknown command 'ad'; commands of Groceries: add, remove, help, quit; did you mean 'add'?"

    /// A message that does not fit beside the hints takes the line alone; one that does keeps them.
    @Test func aMessageThatDoesNotFitBesideTheHintsTakesTheLineAlone() {
        var status = StatusLine(hints: "a add  d delete  ? help  q quit")
        status.show(Self.message)
        #expect(status.text(width: 100) == Self.message)
        status.show("crescent: saved")
        #expect(status.text(width: 100) == "a add  d delete  ? help  q quit  │ crescent: saved")
    }

    /// Wider than the line: it says `?` shows it whole, and the help does, wrapped between words.
    @Test func aMessageWiderThanTheLineIsShownWholeUnderTheHelp() {
        var status = StatusLine(hints: "q quit")
        status.show(Self.message)
        let line = status.text(width: 60)
        #expect(line.hasSuffix("… (? shows it whole)") && DisplayWidth.of(line) <= 60, "\(line)")
        let frame = ScreenFrame(root: nil, overlay: ["q  quit"], status: status, width: 60, height: 10)
        let text = frame.rows.joined(separator: "\n")
        #expect(text.contains("Last message:\ncrescent: unknown command 'ad'; commands of Groceries: add,\nremove, help, quit; did you mean 'add'?"), "\(text)")
    }
}
