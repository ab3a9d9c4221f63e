@testable import CrescentKit
import Testing

/// What a controller app printed while it had the terminal, written out after: bounded to its
/// last 64 KiB, from whole lines, and a line longer than a quarter of that cut with a note, so
/// the errors printed after a 1 MB one are kept (they were dropped with it).
@Suite struct TerminalTranscriptTests {
    private func written(_ transcript: TerminalTranscript) -> String {
        transcript.take().map(\.1).joined()
    }

    @Test func aHugeLineIsCutAndTheLinesAfterItAreKept() {
        let transcript = TerminalTranscript()
        _ = transcript.append(.error, "crescent: error in P:big: " + String(repeating: "E", count: 1_000_000) + "\nstack traceback:\n\tpr.lua:12: in big\n")
        _ = transcript.append(.error, "crescent: error in P:thr: boom\nstack traceback:\n\tpr.lua:16: in thr\n")
        _ = transcript.append(.output, "partial")
        let text = written(transcript)
        #expect(text.hasPrefix("crescent: error in P:big: EEE"), "\(text.prefix(100))")
        let cut = 1_000_000 + "crescent: error in P:big: ".utf8.count - TerminalTranscript.lineLimit
        #expect(text.contains("EEE … (crescent: \(cut) more bytes of this line were dropped)\nstack traceback:\n\tpr.lua:12: in big\n"))
        #expect(text.hasSuffix("crescent: error in P:thr: boom\nstack traceback:\n\tpr.lua:16: in thr\npartial"))
        #expect(!text.contains("were dropped (the last"), "nothing else was dropped")
    }

    @Test func aLineWrittenInPiecesIsCutOnceAndEnded() {
        let transcript = TerminalTranscript()
        let piece = String(repeating: "x", count: 1000)
        for _ in 0..<100 { _ = transcript.append(.output, piece) }
        _ = transcript.append(.output, "\nnext\n")
        let text = written(transcript)
        #expect(text == String(repeating: "x", count: TerminalTranscript.lineLimit)
            + " … (crescent: \(100_000 - TerminalTranscript.lineLimit) more bytes of this line were dropped)\nnext\n")
    }

    @Test func pastTheWindowTheOldestLinesGoWholeAndTheNoteSaysHowMany() {
        let transcript = TerminalTranscript()
        let line = String(repeating: "l", count: 99) + "\n"
        for _ in 0..<1000 { _ = transcript.append(.output, line) }
        _ = transcript.append(.error, "the last error\n")
        let parts = transcript.take()
        let text = parts.map(\.1).joined()
        let kept = parts.dropFirst().map(\.1).joined()
        #expect(parts.first?.0 == .error && parts.first?.1.hasPrefix("crescent: the first ") == true)
        #expect(kept.utf8.count <= TerminalTranscript.limit)
        #expect(kept.hasPrefix(line), "from a whole line")
        #expect(text.hasSuffix("the last error\n"))
        let dropped = 100_000 + "the last error\n".utf8.count - kept.utf8.count
        #expect(text.hasPrefix("crescent: the first \(dropped) bytes printed"), "\(text.prefix(120))")
    }

    @Test func theRestOfALineWhoseStartWentIsDroppedToo() {
        let transcript = TerminalTranscript()
        _ = transcript.append(.output, String(repeating: "a", count: TerminalTranscript.lineLimit - 10))
        for _ in 0..<4 { _ = transcript.append(.output, String(repeating: "b", count: TerminalTranscript.lineLimit - 10) + "\n") }
        _ = transcript.append(.error, "error\n")
        let text = written(transcript)
        #expect(!text.contains("aaaa"), "the line's start was dropped")
        #expect(!text.contains("bbbb …"), "so was its rest")
        #expect(text.contains("\nerror\n") || text.hasSuffix("error\n"))
        #expect(text.hasPrefix("crescent: the first "))
    }
}
